"""The behaviour analysis's inputs: the trajectories files it is given (lis.analysis.trajectories reads
them), or those of the params' job lists.

    files = job_files([Path("data/eval/base/math/sandbox"), Path("x/trajectories.jsonl")])
    inputs, records = load_trajectories(files)
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from lis.agent.trajectory import Trajectory
from lis.analysis.trajectories import job_files as _job_files
from lis.analysis.trajectories import jobs_paths, read_trajectories

WHAT = "behaviour input"
__all__ = ["WHAT", "job_files", "jobs_paths", "load_trajectories"]


def job_files(paths: Iterable[Path]) -> list[Path]:
    """The files of ``paths`` (a job folder stands for its trajectories.jsonl); one-line errors."""
    return _job_files(paths, WHAT)


def load_trajectories(paths: Iterable[Path]) -> tuple[list[dict[str, Any]], list[Trajectory]]:
    """(inputs: path, sha256, records; records) of exactly the given files."""
    return read_trajectories(paths, what=WHAT, convert=lambda d, where: Trajectory.from_dict(d, where=where))

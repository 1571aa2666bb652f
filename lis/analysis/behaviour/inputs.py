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
from lis.analysis.trajectories import read_trajectories

WHAT = "behaviour input"


def job_files(paths: Iterable[Path]) -> list[Path]:
    """The files of ``paths`` (a job folder stands for its trajectories.jsonl); one-line errors."""
    return _job_files(paths, WHAT)


def jobs_paths(eval_root: Path, models: list[str], domains: list[str], modes: list[str]) -> list[Path]:
    """The trajectories of every job of the params' job lists, in the given modes."""
    return [eval_root / m / d / mode / "trajectories.jsonl" for m in models for d in domains for mode in modes]


def load_trajectories(paths: Iterable[Path]) -> tuple[list[dict[str, Any]], list[Trajectory]]:
    """(inputs: path, sha256, records; records) of exactly the given files."""
    return read_trajectories(paths, what=WHAT, convert=lambda d, where: Trajectory.from_dict(d, where=where))

"""Reading exactly the trajectories files the analysis is given (nothing is globbed).

    files = job_files([Path("data/eval/base/math/sandbox"), Path("x/trajectories.jsonl")])
    inputs, records = load_trajectories(files)

A job folder stands for its ``trajectories.jsonl``. A missing file, a folder without one, an
unreadable file or a line that is not a trajectory record is a one-line error naming it.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterable

from lis.agent.trajectory import Trajectory
from lis.errors import LisError
from lis.records import RecordError
from lis.util.jsonl import iter_jsonl

HINT = "run its eval job first (lis eval run --model M --domain D --mode X), or leave it out"


def job_files(paths: Iterable[Path]) -> list[Path]:
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            p = p / "trajectories.jsonl"
        if not p.exists():
            raise LisError(f"behaviour input {p} does not exist", HINT)
        if not p.is_file():
            raise LisError(f"behaviour input {p} is not a file", "give trajectories.jsonl files or eval job folders")
        out.append(p)
    return out


def jobs_paths(eval_root: Path, models: list[str], domains: list[str], modes: list[str]) -> list[Path]:
    """The trajectories of every job of the params' job lists, in the given modes."""
    return [eval_root / m / d / mode / "trajectories.jsonl" for m in models for d in domains for mode in modes]


def load_trajectories(paths: Iterable[Path]) -> tuple[list[dict[str, Any]], list[Trajectory]]:
    """(inputs: path, sha256, records; records) of exactly the given files."""
    inputs, records = [], []
    for path in job_files(paths):
        try:
            data = path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise LisError(f"cannot read behaviour input {path}: {type(e).__name__}: {e}",
                           "re-run the eval job that writes it") from None
        n = 0
        hint = "re-run the eval job that writes it"
        for lineno, d in iter_jsonl(text, mode="strict", where=f"behaviour input {path}", hint=hint):
            try:
                if not isinstance(d.get("steps"), list) or "mode" not in d:
                    raise ValueError("not a trajectory record (no steps/mode)")
                records.append(Trajectory.from_dict(d, where=f"behaviour input {path} line {lineno}"))
            except RecordError as e:
                raise LisError(str(e), hint) from None
            except (ValueError, TypeError, AttributeError, KeyError) as e:
                raise LisError(f"behaviour input {path} line {lineno} is not a trajectory record: "
                               f"{' '.join(str(e).split())[:160]}", hint) from None
            n += 1
        inputs.append({"path": path.as_posix(), "sha256": hashlib.sha256(data).hexdigest(), "records": n})
    return inputs, records

"""Reading exactly the trajectories files an analysis is given (nothing is globbed): the one loader of
the behaviour and efficiency stages.

    inputs, records = read_trajectories(paths, what="behaviour input", convert=lambda d, where: ...)

A job folder stands for its ``trajectories.jsonl``; anything unreadable is a one-line error naming
the file (and line). ``inputs`` (path, sha256, records per file) is the analysis's provenance.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from lis.errors import LisError
from lis.records import RecordError
from lis.util.jsonl import iter_jsonl

T = TypeVar("T")
MISSING_HINT = "run its eval job first (lis eval run --model M --domain D --mode X), or leave it out"
BROKEN_HINT = "re-run the eval job that writes it"


def jobs_paths(eval_root: Path, models: Iterable[str], domains: Iterable[str], modes: Iterable[str]) -> list[Path]:
    """The trajectories of every job of the params' job lists (models x domains x modes) under ``eval_root``."""
    domains, modes = list(domains), list(modes)
    return [eval_root / m / d / mode / "trajectories.jsonl" for m in models for d in domains for mode in modes]


def job_files(paths: Iterable[Path], what: str = "input") -> list[Path]:
    """The files of ``paths``, a job folder standing for its trajectories.jsonl."""
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            p = p / "trajectories.jsonl"
        if not p.exists():
            raise LisError(f"{what} {p} does not exist", MISSING_HINT)
        if not p.is_file():
            raise LisError(f"{what} {p} is not a file", "give trajectories.jsonl files or eval job folders")
        out.append(p)
    return out


def read_trajectories(paths: Iterable[Path], *, what: str,
                      convert: Callable[[dict[str, Any], str], T]) -> tuple[list[dict[str, Any]], list[T]]:
    """(inputs: path, sha256, records per file; every record as ``convert(record, where)`` makes it).
    ``convert`` raises RecordError, ValueError, TypeError, AttributeError or KeyError for a line that
    is not a trajectory record; ``what`` names the inputs in errors."""
    inputs, records = [], []
    for path in job_files(paths, what):
        try:
            data = path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise LisError(f"cannot read {what} {path}: {type(e).__name__}: {e}", BROKEN_HINT) from None
        n = 0
        for lineno, d in iter_jsonl(text, mode="strict", where=f"{what} {path}", hint=BROKEN_HINT):
            where = f"{what} {path} line {lineno}"
            try:
                if not isinstance(d.get("steps"), list) or "mode" not in d:
                    raise ValueError("not a trajectory record (no steps/mode)")
                records.append(convert(d, where))
            except RecordError as e:
                raise LisError(str(e), BROKEN_HINT) from None
            except (ValueError, TypeError, AttributeError, KeyError) as e:
                raise LisError(f"{where} is not a trajectory record: {' '.join(str(e).split())[:160]}",
                               BROKEN_HINT) from None
            n += 1
        inputs.append({"path": path.as_posix(), "sha256": hashlib.sha256(data).hexdigest(), "records": n})
    return inputs, records

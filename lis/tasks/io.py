"""Task sets on disk: one Task per line (JSONL), documents inline, key order kept."""
from __future__ import annotations

from pathlib import Path

from lis.errors import LisError
from lis.tasks.checks import ensure_unique_ids
from lis.tasks.schema import Task
from lis.util.jsonl import iter_jsonl, read_text, write_jsonl


def write_tasks(path: str | Path, tasks: list[Task]) -> Path:
    """Write ``tasks`` as JSONL atomically (temporary file + rename); raises LisError on duplicate ids.

    Keys are not sorted: ``input_files`` keeps its order, which is the order documents are shown in.
    """
    ensure_unique_ids(tasks, str(path))
    path = Path(path)
    if path.is_dir():
        raise LisError(f"{path} is a folder, not a file", f"give the file to write, e.g. {path / ('out' + (path.suffix or '.json'))}")
    write_jsonl(path, (t.to_dict() for t in tasks), default=None)
    return path


def read_tasks(path: str | Path) -> list[Task]:
    """Tasks of a JSONL task set, read strictly: raises LisError (one line naming the file and the line)
    when the file is missing, a line is not JSON or not a task record, or ids repeat."""
    path = Path(path)
    hint = "give a JSONL file written by `lis tasks`"
    if not path.exists():
        raise LisError(f"{path} does not exist", "run `lis tasks` to write it")
    tasks = []
    for n, row in iter_jsonl(read_text(path, hint=hint), mode="strict", where=str(path), hint=hint):
        try:
            tasks.append(Task.from_dict(row, where=f"{path} line {n}"))
        except LisError as e:  # the record's error names the line and the field
            raise LisError(str(e), hint) from None
    return ensure_unique_ids(tasks, str(path))

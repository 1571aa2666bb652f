"""Task sets on disk: one Task per line (JSONL), documents inline, key order kept."""
from __future__ import annotations

import json
import os
from pathlib import Path

from lis.errors import LisError
from lis.tasks.checks import ensure_unique_ids
from lis.tasks.schema import Task


def write_tasks(path: str | Path, tasks: list[Task]) -> Path:
    """Write ``tasks`` as JSONL atomically (temporary file + rename); raises LisError on duplicate ids.

    Keys are not sorted: ``input_files`` keeps its order, which is the order documents are shown in.
    """
    ensure_unique_ids(tasks, str(path))
    path = Path(path)
    if path.is_dir():
        from lis.errors import LisError

        raise LisError(f"{path} is a folder, not a file", f"give the file to write, e.g. {path / ('out' + (path.suffix or '.json'))}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for t in tasks:
            f.write(json.dumps(t.to_dict(), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def read_tasks(path: str | Path) -> list[Task]:
    """Tasks of a JSONL task set; raises LisError when the file is missing, malformed or has duplicate ids."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise LisError(f"{path} does not exist", "run `lis tasks` to write it") from None
    except IsADirectoryError:
        raise LisError(f"{path} is a folder, not a task file", "give a JSONL file written by `lis tasks`") from None
    except UnicodeDecodeError as e:
        raise LisError(f"{path} is not UTF-8 text (byte {e.start})", "give a JSONL file written by `lis tasks`") from None
    tasks = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            tasks.append(Task.from_dict(json.loads(line)))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            raise LisError(f"{path} line {n} is not a task record ({type(e).__name__}: {e})") from None
    return ensure_unique_ids(tasks, str(path))

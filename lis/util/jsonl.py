"""JSONL files: one JSON object per line. Every reader says how it treats a bad line (``mode``, no default):

- ``"strict"``: a line that is not a JSON object ends the command with one line naming the file and
  the line number (:class:`LisError`): inputs a stage must not silently lose (tasks, training data,
  report inputs).
- ``"tolerant"``: such a line is skipped and counted, never fatal: files a crash may leave with a torn
  last line (an append-only log, a cache, episodes being written). The skipped lines go to the
  caller's ``skipped`` list when it gives one (it reports them), else they are logged as one warning.

Blank lines are ignored in both modes. Readers: :func:`read_jsonl`, :func:`iter_jsonl` (line numbers,
for rows checked further), :func:`read_text`. Writers: :func:`write_jsonl` (whole file, atomically) and
:func:`append_jsonl` (one line, fsynced).
"""
from __future__ import annotations

import json
import math
import logging
import os
import stat
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal

from lis.errors import LisError
from lis.util.text import safe_text

Mode = Literal["strict", "tolerant"]
MODES = ("strict", "tolerant")

log = logging.getLogger(__name__)
_append_lock = threading.Lock()


def read_text(path: str | Path, *, hint: str | None = None, missing_ok: bool = False) -> str | None:
    """The UTF-8 text of ``path``; a missing file, a folder or bytes that are not UTF-8 are one
    LisError line naming it (``hint``: how to fix it). ``missing_ok``: a missing file is None."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):  # opening a FIFO would wait for a writer forever
            raise LisError(f"{path} is {_kind(mode)}, not a file", hint)
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return None
        raise LisError(f"{path} does not exist", hint) from None
    except IsADirectoryError:
        raise LisError(f"{path} is a folder, not a JSONL file", hint) from None
    except UnicodeDecodeError as e:
        raise LisError(f"{path} is not UTF-8 text (byte {e.start})", hint) from None
    except OSError as e:
        raise LisError(f"{path} cannot be read ({e.strerror or e})", hint) from None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def no_constant(name: str) -> Any:
    """Strict JSON: NaN and Infinity are not numbers a record may hold."""
    raise ValueError(f"{name} is not a JSON number")


def iter_jsonl(text: str, *, mode: Mode, where: str, hint: str | None = None,
               skipped: list[tuple[int, str]] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of ``text`` (``where`` names it in messages); a
    line that is not a JSON object is handled as ``mode`` says (module docstring)."""
    if mode not in MODES:
        raise ValueError(f"JSONL mode must be 'strict' or 'tolerant', not {mode!r}")
    own: list[tuple[int, str]] = []
    bad = own if skipped is None else skipped
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, parse_constant=no_constant)
        except (json.JSONDecodeError, RecursionError, ValueError) as e:
            why = getattr(e, "msg", None) or ("nested too deep" if isinstance(e, RecursionError) else str(e))
            if mode == "strict":
                raise LisError(f"{where} line {n} is not valid JSON ({why})", hint) from None
            bad.append((n, f"not JSON ({why})"))
            continue
        if not isinstance(obj, dict):
            if mode == "strict":
                raise LisError(f"{where} line {n} is not a JSON object", hint)
            bad.append((n, f"not a JSON object ({type(obj).__name__})"))
            continue
        yield n, obj
    if own:
        log.warning("%s: skipped %d line(s) that are not JSON objects (first: line %d, %s)",
                    where, len(own), own[0][0], own[0][1])


def read_jsonl(path: str | Path, *, mode: Mode, hint: str | None = None, missing_ok: bool = False,
               skipped: list[tuple[int, str]] | None = None) -> list[dict[str, Any]]:
    """The objects of a JSONL file; a missing or unreadable file is one LisError line in both modes
    (``missing_ok``: a missing file has no objects)."""
    text = read_text(path, hint=hint, missing_ok=missing_ok)
    if text is None:
        return []
    return [obj for _, obj in iter_jsonl(text, mode=mode, where=str(path), hint=hint, skipped=skipped)]


def finite(obj: Any) -> Any:
    """``obj`` with every float that is not finite (NaN, ±inf) replaced by None: JSON as the standard
    has it (Python writes ``NaN``, which strict readers refuse and a report would print)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def dumps_line(record: Any, *, default: Any = str) -> str:
    """One JSONL line (with its newline) of ``record``: UTF-8 and key order kept, values JSON does not
    know through ``default``, never unencodable, strict (:func:`finite`)."""
    return safe_text(json.dumps(finite(record), ensure_ascii=False, default=default, allow_nan=False) + "\n")[0]


def write_jsonl(path: str | Path, records: Iterable[Any], *, default: Any = str) -> Path:
    """Write ``records`` one per line atomically: a temporary file beside ``path``, then a rename, so
    a reader sees the old file or the whole new one. Returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for r in records:
                f.write(dumps_line(r, default=default))
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def append_jsonl(path: str | Path, record: Any, *, default: Any = str) -> None:
    """Append one record as a line, fsynced (a crash mid-write leaves a torn last line, which a
    ``tolerant`` reader skips)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = dumps_line(record, default=default)
    with _append_lock, open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())

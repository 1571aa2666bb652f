"""Reading raw upstream rows: JSON / CSV files and required fields, with one-line errors (JSONL: lis.util.jsonl)."""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from lis.errors import LisError

SAMPLES_HINT = "restore data/samples from git"


def require(row: dict[str, Any], *keys: str, where: str) -> None:
    """Raise LisError naming ``where`` and the first of ``keys`` that ``row`` lacks (or has as null)."""
    for k in keys:
        if row.get(k) is None:
            raise LisError(f"{where}: the row has no '{k}' field (fields: {', '.join(sorted(row))})")


def read_json(path: Path) -> Any:
    """Parsed JSON of a file; raises LisError when it is missing or invalid."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LisError(f"{path} does not exist", SAMPLES_HINT) from None
    except json.JSONDecodeError as e:
        raise LisError(f"{path} is not valid JSON ({e.msg} at line {e.lineno})") from None


def read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of a CSV file with a header line; raises LisError when it is missing."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        raise LisError(f"{path} does not exist", SAMPLES_HINT) from None


def split_list(value: str, sep: str = ";") -> list[str]:
    """``a;b;c`` → ``["a", "b", "c"]`` without empty items (AA-LCR's filename and URL lists)."""
    return [s.strip() for s in value.split(sep) if s.strip()]

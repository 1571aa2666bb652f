"""Parquet files of analysis records: typed polars frames a researcher opens with polars, pandas or DuckDB.

    frame = records_frame(rows, SCHEMA)    # an explicit schema: an empty run still has every column
    write_parquet(frame, path)             # atomically (temporary file + rename), byte-stable
    parquet_beside(Path("turns.jsonl"))    # turns.parquet: where a stage puts the frame of its records

The bytes depend only on the frame (and the polars version): the writer's options are fixed here, the
file holds no timestamp, and the rows keep the frame's order, so the same records give the same file.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping

import polars as pl

WRITE_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 3, "statistics": True,
                                 "row_group_size": 512 * 1024}


def records_frame(rows: Iterable[Mapping[str, Any]], schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
    """The rows as a frame of that schema, in the rows' order. A row whose keys are not the schema's
    is a ValueError (polars would drop an extra key silently: the schema and the records must agree)."""
    rows = list(rows)
    for r in rows:
        if r.keys() != schema.keys():
            raise ValueError(f"record keys {sorted(r.keys() ^ schema.keys())} differ from the parquet schema")
    return pl.DataFrame(rows, schema=dict(schema), strict=True)


def parquet_beside(path: str | Path) -> Path:
    """The parquet file beside a stage's JSONL or CSV output: ``turns.jsonl`` -> ``turns.parquet``."""
    path = Path(path)
    out = path.with_suffix(".parquet")
    return out if out != path else path.with_name(f"{path.name}.parquet")


def write_parquet(frame: pl.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` to ``path`` with the fixed options, atomically. Returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        frame.write_parquet(tmp, **WRITE_OPTIONS)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path

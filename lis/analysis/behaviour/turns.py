"""The per-turn audit of the behaviour stage: every turn's verdict and evidence, as JSONL and parquet.

    write_turns(rows, Path("data/analysis/behaviour/turns.jsonl"))   # and turns.parquet beside it
    pl.read_parquet("data/analysis/behaviour/turns.parquet")          # TURN_SCHEMA, the JSONL's rows

One record per turn of every classified episode, in input order: the episode's identity, then the
turn's :class:`classify.TurnVerdict`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import polars as pl

from lis.analysis.behaviour.aggregate import EpisodeRow
from lis.util.jsonl import write_jsonl
from lis.util.parquet import parquet_beside, records_frame, write_parquet

EVIDENCE = pl.Struct({"rule": pl.String, "capability": pl.String, "where": pl.String, "text": pl.String})
TURN_SCHEMA: dict[str, pl.DataType] = {
    "model": pl.String, "domain": pl.String, "mode": pl.String, "task_id": pl.String, "repeat": pl.Int64,
    "included": pl.Boolean, "step": pl.Int64, "calls": pl.Int64, "capabilities": pl.List(pl.String),
    "rules": pl.List(pl.String), "followed": pl.List(pl.String), "evidence": pl.List(EVIDENCE),
}


def turn_records(rows: list[EpisodeRow]) -> Iterator[dict[str, Any]]:
    """One dict per turn of the rows that kept their verdicts (episode_rows(..., keep_verdicts=True))."""
    return ({"model": r.model, "domain": r.domain, "mode": r.mode, "task_id": r.task_id, "repeat": r.repeat,
             "included": r.included, **t.to_dict()}
            for r in rows if r.verdict is not None for t in r.verdict.per_turn)


def write_turns(rows: list[EpisodeRow], path: Path) -> list[Path]:
    """The audit trail: ``path`` (JSONL, one line per turn) and the same rows as parquet beside it; both paths."""
    records = list(turn_records(rows))
    return [write_jsonl(path, records, default=None),
            write_parquet(records_frame(records, TURN_SCHEMA), parquet_beside(path))]

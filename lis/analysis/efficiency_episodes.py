"""The per-episode token records of the efficiency stage, as CSV and parquet (docs/efficiency.md).

    write_episodes_csv(Path("data/analysis/efficiency_episodes.csv"), episodes)   # and .parquet beside it
    pl.read_parquet("data/analysis/efficiency_episodes.parquet")                   # EPISODE_SCHEMA

One row per episode in the input order; the parquet file keeps the types (an unreported count is null).
"""
from __future__ import annotations

import csv
from pathlib import Path

import polars as pl

from lis.analysis.efficiency_tokens import EpisodeEfficiency
from lis.util.parquet import parquet_beside, records_frame, write_parquet

_TOKENS = ("calls", "usage", "prompt", "model", "env", "total", "billed_prompt", "billed_total", "cached",
           "negative_env_turns")
EPISODE_SCHEMA: dict[str, pl.DataType] = {
    "model": pl.String, "domain": pl.String, "mode": pl.String, "task_id": pl.String, "repeat": pl.Int64,
    "termination": pl.String, "included": pl.Boolean, "turns": pl.Int64, "tool_calls": pl.Int64,
    "observation_chars": pl.Int64, "wall_s": pl.Float64, "llm_s": pl.Float64, "env_s": pl.Float64,
    "sandbox_start_s": pl.Float64,
    **{f"tokens_{k}": pl.String if k == "usage" else pl.Int64 for k in _TOKENS},
    "env_time_share": pl.Float64, "llm_time_share": pl.Float64,
}


def write_episodes_csv(path: Path, episodes: list[EpisodeEfficiency]) -> Path:
    """One row per episode at ``path`` (CSV), and the same rows as parquet beside it (``.parquet``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [e.flat() for e in episodes]
    fields = list(rows[0]) if rows else ["model", "domain", "mode", "task_id"]
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    tmp.replace(path)
    write_parquet(records_frame(rows, EPISODE_SCHEMA), parquet_beside(path))
    return path

"""The per-turn behaviour audit and the per-episode token records as parquet beside their JSONL/CSV:
the same rows, the declared schema (also for an empty run), the same bytes from two runs."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import polars as pl
import pytest

from lis.analysis.behaviour.turns import TURN_SCHEMA, write_turns
from lis.analysis.efficiency_episodes import EPISODE_SCHEMA, write_episodes_csv
from lis.analysis.efficiency_tokens import episode_efficiency
from lis.util.parquet import parquet_beside, records_frame
from tests.analysis.behaviour_helpers import bash, edit, episode, submit
from tests.conftest import lis


@pytest.fixture(scope="module")
def trajectories(tmp_path_factory) -> list[Path]:
    """Two models' sandbox episodes (files written and run, a multi-call turn, an infra error) and a vanilla one."""
    root = tmp_path_factory.mktemp("eval")
    jobs = {("A", "sandbox"): [episode(edit("create", "/testbed/s.py", file_text="import requests\n"),
                                       bash("python3 /testbed/s.py"), submit(), model="A"),
                               episode((bash("ls"), bash("cat x.csv")), submit(), model="A", task_id="t2", repeat=1),
                               episode(bash("curl https://x.org"), model="A", task_id="t3", termination="model_error")],
            ("B", "sandbox"): [episode(bash("python3 -c 'print(1)'"), submit(), model="B")],
            ("A", "vanilla"): [episode("Let's verify: 4", model="A", mode="vanilla", termination="answered")]}
    paths = []
    for (model, mode), recs in jobs.items():
        p = root / model / "math" / mode / "trajectories.jsonl"
        p.parent.mkdir(parents=True)
        p.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in recs))
        paths.append(p)
    return paths


def _behaviour(files: list[Path], out: Path) -> Path:
    r = lis(["lis", "behaviour", "analyse", *map(str, files), "--out", str(out / "b.json"),
             "--turns-out", str(out / "turns.jsonl")], check=False)
    assert r.returncode == 0, r.stderr
    return out / "turns.parquet"


def _efficiency(files: list[Path], out: Path) -> Path:
    r = lis(["lis", "efficiency", "tokens", *map(str, files), "--replicates", "100", "--out", str(out / "e.json"),
             "--episodes-csv", str(out / "episodes.csv")], check=False)
    assert r.returncode == 0, r.stderr
    return out / "episodes.parquet"


def test_the_turn_audit_parquet_holds_the_jsonl_rows_with_the_schema_and_the_same_bytes_twice(trajectories, tmp_path):
    first, second = _behaviour(trajectories, tmp_path / "1"), _behaviour(trajectories, tmp_path / "2")
    frame = pl.read_parquet(first)
    assert frame.schema == pl.Schema(TURN_SCHEMA)
    lines = [json.loads(x) for x in (tmp_path / "1" / "turns.jsonl").read_text().splitlines()]
    assert len(lines) == 9 and frame.to_dicts() == lines  # same rows, same order
    assert first.read_bytes() == second.read_bytes()
    # a researcher's query: turns using computation per model
    per_model = (frame.filter("included").group_by("model").agg(compute=pl.col("capabilities").list.contains("compute").sum())
                 .sort("model"))
    assert per_model.rows() == [("A", 1), ("B", 1)]


def _typed(cell: str, dtype: pl.DataType):
    """A CSV cell as the parquet column's type (an empty cell is null)."""
    if cell == "":
        return None
    return {pl.Boolean: lambda x: {"True": True, "False": False}[x], pl.Int64: int, pl.Float64: float}.get(dtype, str)(cell)


def test_the_episode_parquet_holds_the_csv_rows_typed_and_the_same_bytes_twice(trajectories, tmp_path):
    first, second = _efficiency(trajectories, tmp_path / "1"), _efficiency(trajectories, tmp_path / "2")
    frame = pl.read_parquet(first)
    assert frame.schema == pl.Schema(EPISODE_SCHEMA)
    rows = list(csv.DictReader((tmp_path / "1" / "episodes.csv").open(encoding="utf-8")))
    assert len(rows) == 5
    assert frame.to_dicts() == [{k: _typed(v, EPISODE_SCHEMA[k]) for k, v in r.items()} for r in rows]
    assert first.read_bytes() == second.read_bytes()
    infra = frame.filter(pl.col("termination") == "model_error")
    assert infra["included"].to_list() == [False] and frame["tokens_total"].dtype == pl.Int64


def test_pandas_reads_the_same_rows(trajectories, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")  # pandas reads parquet through pyarrow; not a dependency of lis
    path = _efficiency(trajectories, tmp_path)
    assert pd.read_parquet(path).to_dict("records")[0]["task_id"] == pl.read_parquet(path)["task_id"][0]


def test_an_empty_run_writes_every_column(tmp_path):
    turns = write_turns([], tmp_path / "turns.jsonl")
    assert turns == [tmp_path / "turns.jsonl", tmp_path / "turns.parquet"]
    assert pl.read_parquet(turns[1]).schema == pl.Schema(TURN_SCHEMA) and pl.read_parquet(turns[1]).height == 0
    write_episodes_csv(tmp_path / "episodes.csv", [])
    assert pl.read_parquet(tmp_path / "episodes.parquet").schema == pl.Schema(EPISODE_SCHEMA)


def test_the_schemas_name_exactly_the_records_fields():
    rec = episode(bash("ls"), submit()).to_dict()
    assert list(EPISODE_SCHEMA) == list(episode_efficiency(rec).flat())
    with pytest.raises(ValueError, match="differ from the parquet schema"):
        records_frame([{"model": "m"}], EPISODE_SCHEMA)
    assert parquet_beside(Path("a/turns.jsonl")) == Path("a/turns.parquet")
    assert parquet_beside(Path("a/x.parquet")) == Path("a/x.parquet.parquet")  # never the JSONL's own path

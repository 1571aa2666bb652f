"""The behaviour stage's outputs: one JSON document, CSV tables beside it, per-turn verdicts (turns.py).

    inputs, records = load_trajectories(files)
    result = behaviour_report(records, inputs, settings)       # JSON-ready
    write_csvs(result, Path("data/analysis/behaviour"))         # groups, figure2, table4/8/9 .csv
    write_turns(rows, Path("data/analysis/behaviour/turns.jsonl"))   # and turns.parquet (turns.py)

CSV numbers are percentages (usage) and turns; the JSON keeps fractions with 95% intervals.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterable

from lis.agent.trajectory import Trajectory
from lis.analysis.behaviour.aggregate import ANY, EpisodeRow, episode_rows
from lis.analysis.behaviour.rules import Rules, load_rules
from lis.analysis.behaviour.tables import behaviour_tables
from lis.analysis.behaviour.turns import write_turns  # noqa: F401  (re-exported: the stage's outputs)

SCHEMA = "lis.behaviour/1"


def behaviour_report(records: list[Trajectory], inputs: list[dict[str, Any]], settings: dict,
                     rules: Rules | None = None, rows: list[EpisodeRow] | None = None) -> dict[str, Any]:
    rules = rules or load_rules()
    if rows is None:
        rows = episode_rows(records, rules, settings["include_reasoning"])
    tables = behaviour_tables(rows, rules, settings)
    return {"schema": SCHEMA, "definitions": "docs/behaviour.md",
            "rules": {"file": rules.path, "sha256": rules.sha256, "version": rules.version,
                      "capabilities": {k: v.get("title", k) for k, v in rules.capabilities.items()},
                      "ids": [r.id for r in rules.rules]},
            "settings": settings, "inputs": inputs,
            "episodes": {"total": len(rows), "included": sum(r.included for r in rows)},
            **tables}


def _pct(cell: dict | None) -> tuple[Any, Any, Any]:
    if not cell or cell.get("value") is None:
        return None, None, None
    ci = cell.get("ci95") or [None, None]
    f = lambda x: None if x is None else round(100 * x, 2)  # noqa: E731
    return f(cell["value"]), f(ci[0]), f(ci[1])


def _num(cell: dict | None) -> tuple[Any, Any, Any]:
    if not cell or cell.get("value") is None:
        return None, None, None
    ci = cell.get("ci95") or [None, None]
    return cell["value"], ci[0], ci[1]


def _usage_cols(caps: Iterable[str], usage: dict | None, turns: dict | None, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in (*caps, ANY):
        out[f"{prefix}{c}_pct"], out[f"{prefix}{c}_pct_lo"], out[f"{prefix}{c}_pct_hi"] = _pct((usage or {}).get(c))
    out[f"{prefix}avg_turns"], out[f"{prefix}avg_turns_lo"], out[f"{prefix}avg_turns_hi"] = _num(turns)
    return out


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=cols or ["empty"])
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    tmp.replace(path)


def write_csvs(report: dict[str, Any], folder: Path) -> list[Path]:
    caps = list(report["rules"]["capabilities"])
    written = []

    def out(name: str, rows: list[dict[str, Any]]) -> None:
        _write(folder / name, rows)
        written.append(folder / name)

    out("groups.csv", [{"model": g["model"], "domain": g["domain"], "mode": g["mode"], "episodes": g["episodes"],
                        "tasks": g["tasks"], "excluded": g["excluded"], "turns": g["turns"],
                        **_usage_cols(caps, g["usage"], g["avg_turns"])} for g in report["groups"]])
    out("figure2_by_domain.csv", [{"domain": d["domain"], "models": " ".join(d["models"]), "episodes": d["episodes"],
                                   **_usage_cols(caps, d["usage"], d["avg_turns"])} for d in report["figure2"]["by_domain"]])
    out("table4.csv", [{"group": r["group"], "models": " ".join(r["models"]), "missing": " ".join(r["missing"]),
                        "episodes": r["episodes"], **_usage_cols(caps, r["usage"], r["avg_turns"])}
                       for r in report["table4"]])
    rows8 = []
    for r in report["table8"]:
        row = {"label": r["label"], "before_model": r["before_model"], "after_model": r["after_model"],
               "missing": " ".join(r["missing"])}
        for side in ("before", "after", "delta"):
            s = r[side] or {}
            row.update(_usage_cols(caps, s.get("usage"), s.get("avg_turns"), f"{side}_"))
        rows8.append(row)
    out("table8.csv", rows8)
    ids = report["table9"]["rows"]
    rows9 = []
    for m in report["table9"]["models"]:
        row = {"model": m["model"], "responses": m["responses"]}
        for i in ids:
            row[i], row[f"{i}_lo"], row[f"{i}_hi"] = _num(m["per_response"][i])
        rows9.append(row)
    out("table9.csv", rows9)
    rows9p = []
    for p in report["table9"]["pairs"]:
        row = {"label": p["label"], "before_model": p["before_model"], "after_model": p["after_model"],
               "missing": " ".join(p["missing"])}
        for side in ("before", "after", "delta"):
            for i in ids:
                row[f"{side}_{i}"] = _num((p[side] or {}).get(i))[0]
        rows9p.append(row)
    out("table9_pairs.csv", rows9p)
    return written

"""Figure 2 and Tables 4, 8 and 9 from the episode rows (JSON records a report stage renders).

    report = behaviour_tables(rows, rules, settings)
    report["groups"]   # one record per model × domain × mode
    report["figure2"]  # {"by_model": [...], "by_domain": [...]}: usage and turns per domain
    report["table4"]   # one row per settings.groups entry (e.g. strong vs weak)
    report["table8"]   # one row per settings.rl_pairs entry: before, after, after − before
    report["table9"]   # {"models": [...], "pairs": [...]}: reasoning patterns per vanilla response

A model's number over several domains pools its episodes; a group's number is the unweighted mean
over its models, as the paper averages. Models a group or pair names but the inputs lack are listed
under ``missing``.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from lis.analysis.behaviour.aggregate import ANY, EpisodeRow, GroupStats, delta, group_stats, mean_of, member, order
from lis.analysis.behaviour.reasoning import row_ids
from lis.analysis.behaviour.rules import Rules
from lis.analysis.behaviour.stats import ratio, stat
from lis.util.stats import bootstrap_ratios, rng_for


def _by(rows: list[EpisodeRow], *fields: str) -> dict[tuple, list[EpisodeRow]]:
    out: dict[tuple, list[EpisodeRow]] = defaultdict(list)
    for r in rows:
        out[tuple(getattr(r, f) for f in fields)].append(r)
    return dict(sorted(out.items()))


def _reasoning(rows: list[EpisodeRow], ids: tuple[str, ...], key: dict, settings: dict) -> dict[str, Any]:
    included = sorted((r for r in rows if r.included and r.reasoning is not None), key=order)
    n = len(included)
    X = np.array([[r.reasoning[i] for i in ids] for r in included], dtype=float).reshape(n, len(ids))
    E = np.ones(n)
    pt = ratio(X, E)
    reps = bootstrap_ratios(X, E, b=settings["replicates"],
                            rng=rng_for(settings["seed"], "reasoning", tuple(sorted(key.items()))))
    return {"n": n, "points": pt, "reps": reps,
            "record": {**key, "responses": n, "excluded": sum(1 for r in rows if not r.included),
                       "per_response": {i: stat(pt[j], reps[:, j], n, 2) for j, i in enumerate(ids)}}}


def behaviour_tables(rows: list[EpisodeRow], rules: Rules, settings: dict) -> dict[str, Any]:
    caps = rules.capability_ids
    tool_mode = settings["tool_mode"]
    groups = {k: group_stats(v, caps, {"model": k[0], "domain": k[1], "mode": k[2]}, settings)
              for k, v in _by(rows, "model", "domain", "mode").items()}
    tool_rows = [r for r in rows if r.mode == tool_mode]
    models = {k[0]: group_stats(v, caps, {"model": k[0], "domain": "all", "mode": tool_mode}, settings)
              for k, v in _by(tool_rows, "model").items()}

    # Figure 2: usage and turns by domain (per model, and the mean over models)
    by_model = [g.record() for k, g in groups.items() if k[2] == tool_mode]
    fig_models = settings["figure2_models"]
    by_domain = []
    for (domain,), _ in _by(tool_rows, "domain").items():
        present = sorted(k[0] for k in groups if k[1] == domain and k[2] == tool_mode)
        chosen = [m for m in present if fig_models is None or m in fig_models]
        stats = [groups[(m, domain, tool_mode)] for m in chosen]
        by_domain.append({"domain": domain, "mode": tool_mode, "models": chosen, **mean_of(stats, caps)})

    # Table 4: groups of models (strong vs weak)
    table4 = []
    for name, names in settings["groups"].items():
        present = [m for m in names if m in models]
        stats = [models[m] for m in present]
        table4.append({"group": name, "mode": tool_mode, "models": present,
                       "missing": [m for m in names if m not in models], **mean_of(stats, caps),
                       "members": [member(s) for s in stats]})

    # Table 8: before vs after RL
    table8 = []
    for p in settings["rl_pairs"]:
        row: dict[str, Any] = {"label": p["label"], "before_model": p["before"], "after_model": p["after"],
                               "mode": tool_mode, "missing": [m for m in (p["before"], p["after"]) if m not in models]}
        for side in ("before", "after"):
            s = models.get(p[side])
            row[side] = None if s is None else _model_numbers(s, caps)
        row["delta"] = None if row["missing"] else delta(models[p["before"]], models[p["after"]], caps)
        table8.append(row)

    # Table 9: reasoning patterns per vanilla response
    ids = row_ids(rules)
    vanilla = _by([r for r in rows if r.mode == "vanilla"], "model")
    t9 = {k[0]: _reasoning(v, ids, {"model": k[0], "mode": "vanilla"}, settings) for k, v in vanilla.items()}
    pairs = []
    for p in settings["rl_pairs"]:
        b, a = t9.get(p["before"]), t9.get(p["after"])
        entry: dict[str, Any] = {"label": p["label"], "before_model": p["before"], "after_model": p["after"],
                                 "missing": [m for m, x in ((p["before"], b), (p["after"], a)) if x is None],
                                 "before": b and b["record"]["per_response"], "after": a and a["record"]["per_response"],
                                 "delta": None}
        if a and b:
            n = min(a["n"], b["n"])
            entry["delta"] = {i: stat(a["points"][j] - b["points"][j], a["reps"][:, j] - b["reps"][:, j], n, 2)
                              for j, i in enumerate(ids)}
        pairs.append(entry)

    return {"groups": [g.record() for g in groups.values()],
            "models": [s.record() for s in models.values()],
            "figure2": {"by_model": by_model, "by_domain": by_domain},
            "table4": table4, "table8": table8,
            "table9": {"rows": list(ids), "models": [x["record"] for x in t9.values()], "pairs": pairs}}


def _model_numbers(s: GroupStats, caps: tuple[str, ...]) -> dict[str, Any]:
    r = s.record()
    return {"episodes": r["episodes"], "turns": r["turns"], "avg_turns": r["avg_turns"],
            "usage": {c: r["usage"][c] for c in (*caps, ANY)}}

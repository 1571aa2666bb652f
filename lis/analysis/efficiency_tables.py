"""Tables 10 and 11 of the paper from the eval jobs' trajectories (docs/efficiency.md).

    inputs, episodes = load_episodes([Path("data/eval/base/math/sandbox/trajectories.jsonl"), ...])
    result = efficiency_report(episodes, inputs)    # JSON-ready: groups, table10, table11
    write_episodes_csv(path, episodes)              # one row per episode, CSV and parquet (efficiency_episodes)

Reads exactly the files it is given. Infrastructure errors are counted but left out of every
average; episodes without reported usage count for time, not for tokens. Every number of a
(model, domain, mode) group carries its n, and every average a cluster-bootstrap interval over tasks.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from lis.analysis.efficiency_episodes import write_episodes_csv  # noqa: F401  (re-exported: the stage's outputs)
from lis.analysis.efficiency_stats import B_DEFAULT, Clustered, percentile_ci, rng_for, rounded
from lis.analysis.efficiency_tokens import REPORTED, EpisodeEfficiency, episode_efficiency
from lis.analysis.trajectories import read_trajectories
from lis.agent.trajectory import Trajectory
from lis.records import check

TOKEN_FIELDS = ("prompt", "model", "env", "total", "billed_total")
SCHEMA = "lis.efficiency.tokens/1"
Group = tuple[str, str, str]  # model, domain, mode


def _episode(rec: dict[str, Any], where: str) -> EpisodeEfficiency:
    check(Trajectory, rec, where=where)
    return episode_efficiency(rec)


def load_episodes(paths: Iterable[Path]) -> tuple[list[dict[str, Any]], list[EpisodeEfficiency]]:
    """Every record of the given trajectories files (or eval job folders), as EpisodeEfficiency; a
    one-line LisError naming the file (and line) that cannot be read (lis.analysis.trajectories)."""
    return read_trajectories(paths, what="efficiency input", convert=_episode)


def _stat(c: Clustered, num: str, den: str, key: tuple, b: int, digits: int) -> dict[str, Any]:
    value = c.ratio(num, den)
    return {"value": rounded(value, digits), "ci95": rounded(percentile_ci(c.boot_ratio(num, den, rng_for(*key), b)),
                                                           digits),
            "n": c.n, "tasks": c.clusters}


class _GroupData:
    def __init__(self, key: Group, episodes: list[EpisodeEfficiency]):
        self.key = key
        self.episodes = episodes
        self.included = [e for e in episodes if e.included]
        self.tok = Clustered()      # episodes with reported usage
        self.cached = Clustered()   # ... that also report cached tokens
        self.time = Clustered()     # episodes with a wall time
        for e in self.included:
            t = e.tokens
            if t.usage == REPORTED:
                self.tok.add(e.task_id, **{f: getattr(t, f) for f in TOKEN_FIELDS}, turns=e.turns,
                             calls=t.calls, negative=t.negative_env_turns)
                if t.cached is not None:
                    self.cached.add(e.task_id, cached=t.cached, billed_prompt=t.billed_prompt)
            if e.wall_s:
                self.time.add(e.task_id, wall=e.wall_s, env=e.env_s, llm=e.llm_s, start=e.sandbox_start_s)

    def boot(self, num: str, den: str, b: int, c: Clustered | None = None) -> np.ndarray | None:
        c = c or self.tok
        return c.boot_ratio(num, den, rng_for(*self.key, num, den), b)

    def summary(self, b: int) -> dict[str, Any]:
        model, domain, mode = self.key
        tok, tm = self.tok, self.time
        counts = Counter(e.termination for e in self.episodes)
        usage = Counter(e.tokens.usage for e in self.included)
        tokens = {f: {"mean": rounded(tok.mean(f), 1), "ci95": rounded(percentile_ci(self.boot(f, "_n", b)), 1),
                      "n": tok.n, "tasks": tok.clusters} for f in TOKEN_FIELDS}
        tokens["cached"] = {"mean": rounded(self.cached.mean("cached"), 1),
                            "ci95": rounded(percentile_ci(self.boot("cached", "_n", b, self.cached)), 1),
                            "n": self.cached.n, "tasks": self.cached.clusters}
        return {
            "model": model, "domain": domain, "mode": mode,
            "episodes": len(self.episodes),
            "excluded": {"infra_error": len(self.episodes) - len(self.included),
                         "usage_missing": usage.get("missing", 0), "no_model_call": usage.get("no_calls", 0),
                         "no_wall_time": sum(1 for e in self.included if not e.wall_s)},
            "terminations": dict(sorted(counts.items())),
            "tokens": tokens,
            "turns": {"mean": rounded(tok.mean("turns"), 2), "ci95": rounded(percentile_ci(self.boot("turns", "_n", b)), 2),
                      "n": tok.n},
            "env_token_share": {**_stat(tok, "env", "total", (*self.key, "env", "total"), b, 4)},
            "cached_share_of_billed_prompt": _stat(self.cached, "cached", "billed_prompt",
                                                   (*self.key, "cached", "billed_prompt"), b, 4),
            "env_time_share": _stat(tm, "env", "wall", (*self.key, "env", "wall"), b, 4),
            "llm_time_share": _stat(tm, "llm", "wall", (*self.key, "llm", "wall"), b, 4),
            "sandbox_start_share": _stat(tm, "start", "wall", (*self.key, "start", "wall"), b, 4),
            "wall_s": {"mean": rounded(tm.mean("wall"), 3), "ci95": rounded(percentile_ci(self.boot("wall", "_n", b, tm)), 3),
                       "n": tm.n},
            "negative_env_turns": int(sum(e.tokens.negative_env_turns for e in self.included
                                          if e.tokens.usage == REPORTED)),
        }


def _macro(parts: list[tuple[float | None, np.ndarray | None]]) -> tuple[float | None, np.ndarray | None]:
    """The mean over domains of per-domain values and of their bootstrap replicates."""
    vals = [v for v, _ in parts]
    if not parts or any(v is None for v in vals):
        return None, None
    reps = [r for _, r in parts]
    rep = None if any(r is None for r in reps) else np.mean(np.vstack(reps), axis=0)
    return float(np.mean(vals)), rep


def _ratio_entry(num: tuple[float | None, np.ndarray | None], den: tuple[float | None, np.ndarray | None]) -> dict:
    (a, ra), (b, rb) = num, den
    value = a / b if a is not None and b else None
    reps = ra / rb if ra is not None and rb is not None else None
    return {"value": rounded(value, 4), "ci95": rounded(percentile_ci(reps), 4)}


def _mode_cell(g: _GroupData | None, b: int) -> dict[str, Any] | None:
    if g is None:
        return None
    return {"total": {"mean": rounded(g.tok.mean("total"), 1), "ci95": rounded(percentile_ci(g.boot("total", "_n", b)), 1),
                      "n": g.tok.n, "tasks": g.tok.clusters},
            **{f: rounded(g.tok.mean(f), 1) for f in ("prompt", "model", "env", "billed_total")}}


def table10(groups: dict[Group, _GroupData], b: int, modes: tuple[str, str] = ("vanilla", "sandbox")) -> list[dict]:
    """Tokens per episode, vanilla vs sandbox, per model and domain, with the ratio sandbox/vanilla;
    and per model a row over all its domains that have both modes (each domain weighs equally)."""
    van, sbx = modes
    rows = []
    for model in sorted({k[0] for k in groups}):
        domains = sorted({k[1] for k in groups if k[0] == model and k[2] in modes})
        both: list[str] = []
        for d in domains:
            gv, gs = groups.get((model, d, van)), groups.get((model, d, sbx))
            row = {"model": model, "domain": d, van: _mode_cell(gv, b), sbx: _mode_cell(gs, b), "ratio": None}
            if gv and gs and gv.tok.n and gs.tok.n:
                both.append(d)
                row["ratio"] = _ratio_entry((gs.tok.mean("total"), gs.boot("total", "_n", b)),
                                            (gv.tok.mean("total"), gv.boot("total", "_n", b)))
            rows.append(row)
        if both:
            mv = _macro([(groups[(model, d, van)].tok.mean("total"), groups[(model, d, van)].boot("total", "_n", b))
                         for d in both])
            ms = _macro([(groups[(model, d, sbx)].tok.mean("total"), groups[(model, d, sbx)].boot("total", "_n", b))
                         for d in both])
            rows.append({"model": model, "domain": "all", "domains": both,
                         van: {"total": {"mean": rounded(mv[0], 1), "ci95": rounded(percentile_ci(mv[1]), 1),
                                         "n": sum(groups[(model, d, van)].tok.n for d in both)}},
                         sbx: {"total": {"mean": rounded(ms[0], 1), "ci95": rounded(percentile_ci(ms[1]), 1),
                                         "n": sum(groups[(model, d, sbx)].tok.n for d in both)}},
                         "ratio": _ratio_entry(ms, mv)})
    return rows


def table11(groups: dict[Group, _GroupData], b: int, mode: str = "sandbox") -> list[dict]:
    """Environment-token share and environment-time share (and the model's time share) per model
    and domain in sandbox mode; per model a row over its domains (each domain weighs equally)."""
    rows = []
    shares = (("env_token_share", "env", "total", "tok"), ("env_time_share", "env", "wall", "time"),
              ("llm_time_share", "llm", "wall", "time"))
    for model in sorted({k[0] for k in groups if k[2] == mode}):
        parts: dict[str, list] = defaultdict(list)
        ns: dict[str, int] = defaultdict(int)
        domains = sorted(k[1] for k in groups if k[0] == model and k[2] == mode)
        for d in domains:
            g = groups[(model, d, mode)]
            row: dict[str, Any] = {"model": model, "domain": d}
            for name, num, den, which in shares:
                c = getattr(g, which)
                v, reps = c.ratio(num, den), g.boot(num, den, b, c)
                row[name] = {"value": rounded(v, 4), "ci95": rounded(percentile_ci(reps), 4), "n": c.n,
                             "tasks": c.clusters}
                if c.n:
                    parts[name].append((v, reps))
                    ns[name] += c.n
            rows.append(row)
        if len(domains) > 1:
            row = {"model": model, "domain": "all", "domains": domains}
            for name, *_ in shares:
                v, reps = _macro(parts[name]) if len(parts[name]) == len(domains) else (None, None)
                row[name] = {"value": rounded(v, 4), "ci95": rounded(percentile_ci(reps), 4), "n": ns[name]}
            rows.append(row)
    return rows


def efficiency_report(episodes: list[EpisodeEfficiency], inputs: list[dict[str, Any]], b: int = B_DEFAULT) -> dict:
    """Groups (model x domain x mode) and Tables 10 and 11, JSON-ready."""
    by_key: dict[Group, list[EpisodeEfficiency]] = defaultdict(list)
    for e in episodes:
        by_key[(e.model, e.domain, e.mode)].append(e)
    groups = {k: _GroupData(k, v) for k, v in sorted(by_key.items())}
    return {
        "schema": SCHEMA,
        "definitions": "docs/efficiency.md",
        "interval": {"level": 0.95, "method": "percentile bootstrap over tasks (episodes of a task kept together)",
                     "replicates": b},
        "inputs": inputs,
        "groups": [g.summary(b) for g in groups.values()],
        "table10": table10(groups, b),
        "table11": table11(groups, b),
    }

"""Per model × domain × mode numbers of the behaviour analysis (docs/behaviour.md).

    rows = episode_rows(records, rules)                   # one summary per episode (classified)
    g = group_stats(rows_of_one_group, caps, key, settings)
    g.record()        # {"model", "domain", "mode", "episodes", "tasks", "excluded", "turns",
                      #  "avg_turns": {value, ci95}, "usage": {cap: {value, ci95}, "any": ...}, ...}

The usage rate of a capability is turns using it / turns, both summed over the group's episodes
(the paper's ratio of sums). Episodes that ended in an infrastructure error or were interrupted are
excluded and counted in ``excluded``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
import polars as pl

from lis.agent.trajectory import Trajectory
from lis.analysis.behaviour.classify import EpisodeVerdict, classify_episode
from lis.analysis.behaviour.reasoning import count_patterns, response_text
from lis.analysis.behaviour.rules import Rules
from lis.analysis.behaviour.stats import ratio, rounded, stat
from lis.util.stats import bootstrap_ratios, rng_for

ANY = "any"


@dataclass
class EpisodeRow:
    model: str
    domain: str
    mode: str
    task_id: str
    repeat: int
    termination: str
    included: bool
    turns: int
    calls: int
    used: dict[str, int]                 # capability (and "any") -> turns that used it
    rules: dict[str, int]                # rule id -> turns it matched
    reasoning: dict[str, int] | None     # Table 9 counts (vanilla episodes)
    verdict: EpisodeVerdict | None = field(default=None, repr=False)


def episode_row(rec: Trajectory, rules: Rules, include_reasoning: bool = False, keep_verdict: bool = False) -> EpisodeRow:
    v = classify_episode(rec, rules)
    used = {c: v.turns_using(c) for c in rules.capability_ids}
    used[ANY] = v.turns_using_any()
    reasoning = count_patterns(response_text(rec, include_reasoning), rules) if rec.mode == "vanilla" else None
    return EpisodeRow(rec.model, rec.domain, rec.mode, rec.task_id, rec.repeat, rec.termination, v.included,
                      v.turns, v.calls, used, v.turns_by_rule(), reasoning, v if keep_verdict else None)


def episode_rows(records: Iterable[Trajectory], rules: Rules, include_reasoning: bool = False,
                 keep_verdicts: bool = False) -> list[EpisodeRow]:
    return [episode_row(r, rules, include_reasoning, keep_verdicts) for r in records]


def order(r: EpisodeRow) -> tuple:
    return (r.domain, r.task_id, r.repeat, r.mode, r.turns, tuple(sorted(r.used.items())),
            tuple(sorted((r.reasoning or {}).items())))


@dataclass
class GroupStats:
    """One group's points and bootstrap replicates (kept for the tables that combine groups)."""

    key: dict[str, str]
    caps: tuple[str, ...]
    episodes: int
    tasks: int
    units: int
    excluded: int
    excluded_kinds: dict[str, int]
    turns: int
    calls: int
    usage: dict[str, float]
    usage_reps: dict[str, np.ndarray]
    avg_turns: float
    avg_turns_reps: np.ndarray
    episodes_using: dict[str, int]
    used_turns: dict[str, int]
    rules: dict[str, int]

    def record(self) -> dict[str, Any]:
        return {**self.key, "episodes": self.episodes, "tasks": self.tasks, "excluded": self.excluded,
                "excluded_kinds": self.excluded_kinds, "turns": self.turns, "calls": self.calls,
                "avg_turns": stat(self.avg_turns, self.avg_turns_reps, self.units, 2),
                "usage": {c: {**stat(self.usage[c], self.usage_reps[c], self.units), "turns": self.used_turns[c]}
                          for c in (*self.caps, ANY)},
                "episodes_using": self.episodes_using, "turns_by_rule": dict(sorted(self.rules.items()))}


def group_stats(rows: list[EpisodeRow], caps: tuple[str, ...], key: dict[str, str], settings: dict) -> GroupStats:
    included = sorted((r for r in rows if r.included), key=order)  # the bootstrap must not depend on input order
    excluded = Counter(r.termination for r in rows if not r.included)
    cols = (*caps, ANY)
    # per unit (an episode, or a task's episodes together), in first-seen order: episodes E, turns T, turns using U
    frame = pl.DataFrame([{"unit": r.task_id if settings["cluster"] == "task" else str(i), "turns": r.turns,
                           **{f"used_{c}": r.used[c] for c in cols}} for i, r in enumerate(included)],
                         schema={"unit": pl.String, "turns": pl.Int64, **{f"used_{c}": pl.Int64 for c in cols}})
    units = frame.group_by("unit", maintain_order=True).agg(pl.len().alias("episodes"), pl.exclude("unit").sum())
    E, T = (units[c].to_numpy().astype(float) for c in ("episodes", "turns"))
    U = units.select(f"used_{c}" for c in cols).to_numpy().astype(float)
    b, seed = settings["replicates"], settings["seed"]
    kt = tuple(sorted(key.items()))
    usage_pt = ratio(U, T)
    usage_reps = bootstrap_ratios(U, T, b=b, rng=rng_for(seed, "usage", kt))
    turns_pt = ratio(T[:, None], E)[0]
    turns_reps = bootstrap_ratios(T[:, None], E, b=b, rng=rng_for(seed, "turns", kt))[:, 0]
    rules: Counter = Counter()
    for r in included:
        rules.update(r.rules)
    return GroupStats(key=key, caps=caps, episodes=len(included), tasks=len({r.task_id for r in included}),
                      units=len(units), excluded=sum(excluded.values()), excluded_kinds=dict(sorted(excluded.items())),
                      turns=int(T.sum()), calls=sum(r.calls for r in included),
                      usage={c: float(usage_pt[i]) for i, c in enumerate(cols)},
                      usage_reps={c: usage_reps[:, i] for i, c in enumerate(cols)},
                      avg_turns=float(turns_pt), avg_turns_reps=turns_reps,
                      episodes_using={c: sum(1 for r in included if r.used[c] > 0) for c in cols},
                      used_turns={c: int(U[:, i].sum()) for i, c in enumerate(cols)},
                      rules=dict(rules))


def mean_of(stats: list[GroupStats], caps: tuple[str, ...]) -> dict[str, Any]:
    """The unweighted mean over groups (models) of each number, with the replicates averaged
    replicate by replicate (each model's episodes resampled on their own)."""
    if not stats:
        return {"usage": {c: {"value": None, "ci95": None} for c in (*caps, ANY)},
                "avg_turns": {"value": None, "ci95": None}, "episodes": 0}
    units = min(s.units for s in stats)

    def avg(points: list[float], reps: list[np.ndarray], digits: int) -> dict:
        with np.errstate(invalid="ignore"):
            return stat(float(np.mean(points)), np.mean(np.vstack(reps), axis=0), units, digits)

    return {"usage": {c: avg([s.usage[c] for s in stats], [s.usage_reps[c] for s in stats], 4) for c in (*caps, ANY)},
            "avg_turns": avg([s.avg_turns for s in stats], [s.avg_turns_reps for s in stats], 2),
            "episodes": sum(s.episodes for s in stats)}


def delta(before: GroupStats, after: GroupStats, caps: tuple[str, ...]) -> dict[str, Any]:
    """after − before for each number, the interval from the difference of independent replicates."""
    units = min(before.units, after.units)
    return {"usage": {c: stat(after.usage[c] - before.usage[c], after.usage_reps[c] - before.usage_reps[c], units)
                      for c in (*caps, ANY)},
            "avg_turns": stat(after.avg_turns - before.avg_turns, after.avg_turns_reps - before.avg_turns_reps, units, 2)}


def member(s: GroupStats) -> dict[str, Any]:
    return {"model": s.key["model"], "episodes": s.episodes, "turns": s.turns,
            "usage": {c: rounded(v) for c, v in s.usage.items()}, "avg_turns": rounded(s.avg_turns, 2)}

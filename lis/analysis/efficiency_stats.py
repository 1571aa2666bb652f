"""Intervals for the efficiency numbers: a cluster bootstrap over tasks, and Student-t over repeats.

Over episodes, the bootstrap resamples *tasks* and keeps a task's episodes together (its repeats
are not independent); every statistic is a ratio of sums, so one routine serves means and shares,
seeded from the group's name so that the order of groups changes nothing. Over the few repeats of a
timed run: mean and a Student-t interval.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Sequence

import numpy as np

from lis.util.stats import bootstrap_ratios, percentile_ci, rng_for, t_interval

__all__ = ["B_DEFAULT", "Clustered", "geometric_interval", "percentile_ci", "rng_for", "rounded", "t_interval"]

B_DEFAULT = 2000


class Clustered:
    """Per-task sums of named quantities, for the cluster bootstrap.

        c = Clustered()
        c.add("task-1", total=1200, env=400)   # one episode
        c.ratio("env", "total")               # point estimate: sum(env) / sum(total)
        c.boot_ratio("env", "total", rng, B)  # B bootstrap replicates of it
    """

    def __init__(self) -> None:
        self._sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))

    def add(self, cluster: str, **values: float) -> None:
        sums = self._sums[cluster]
        sums["_n"] += 1.0
        for k, v in values.items():
            sums[k] += float(v)

    @property
    def n(self) -> int:
        return int(sum(s["_n"] for s in self._sums.values()))

    @property
    def clusters(self) -> int:
        return len(self._sums)

    def _column(self, name: str) -> np.ndarray:
        return np.array([s.get(name, 0.0) for s in self._sums.values()], dtype=float)

    def ratio(self, num: str, den: str = "_n") -> float | None:
        d = self._column(den).sum()
        return float(self._column(num).sum() / d) if d else None

    def boot_ratio(self, num: str, den: str, rng: np.random.Generator, b: int = B_DEFAULT) -> np.ndarray | None:
        """``b`` bootstrap replicates of sum(num)/sum(den) over resampled tasks (None with fewer than
        2 tasks: resampling one task's episodes as a block says nothing about the spread)."""
        if self.clusters < 2:
            return None
        return bootstrap_ratios(self._column(num), self._column(den), rng=rng, b=b, batch=None)

    def mean(self, name: str) -> float | None:
        return self.ratio(name, "_n")


def geometric_interval(ratios: Sequence[float]) -> dict:
    """Geometric mean of positive ratios with a 95% Student-t interval computed on their logarithms
    (so that a/b and b/a get reciprocal answers, and the interval stays positive)."""
    logs = [math.log(r) for r in ratios if r > 0]
    s = t_interval(logs)
    if not s["n"]:
        return {"mean": None, "n": 0, "ci95": None}
    return {"mean": math.exp(s["mean"]), "n": s["n"],
            "ci95": [math.exp(s["ci95"][0]), math.exp(s["ci95"][1])] if s["ci95"] else None}


def rounded(x, digits: int):
    """``x`` (a number, a list of numbers or None) rounded for JSON."""
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [rounded(v, digits) for v in x]
    if isinstance(x, dict):
        return {k: rounded(v, digits) if isinstance(v, (int, float, list, tuple, dict)) and k != "n" else v
                for k, v in x.items()}
    return round(float(x), digits)

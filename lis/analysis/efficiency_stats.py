"""Intervals for the efficiency numbers: a cluster bootstrap over tasks, and Student-t over repeats.

Every average is reported with its n and a 95% interval:

- Over episodes (tokens, shares): percentile bootstrap that resamples *tasks* with replacement and
  keeps all episodes of a task together (the repeats of one task are not independent). Each
  statistic is a ratio of sums over the resampled tasks: a mean is sum(x)/sum(1), a share is
  sum(env)/sum(total), so one routine serves all of them. The generator is seeded from the
  group's name, so a number does not change with the order groups are computed in.
- Over repeats of a timed run (queries per minute): mean and a Student-t 95% interval (n is small,
  2 to 5 repeats; a bootstrap of 3 values is not an interval).
"""
from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from typing import Sequence

import numpy as np

B_DEFAULT = 2000
# Two-sided 95% Student-t quantiles t_{0.975, df}, df = 1..30 (beyond: the normal's 1.96).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def rng_for(*key: object) -> np.random.Generator:
    """A generator seeded from ``key`` (stable across runs and machines)."""
    digest = hashlib.sha256(repr(key).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


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
        x, d = self._column(num), self._column(den)
        idx = rng.integers(0, len(x), size=(b, len(x)))
        dens = d[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return x[idx].sum(axis=1) / dens

    def mean(self, name: str) -> float | None:
        return self.ratio(name, "_n")

    def boot_mean(self, name: str, rng: np.random.Generator, b: int = B_DEFAULT) -> np.ndarray | None:
        return self.boot_ratio(name, "_n", rng, b)


def percentile_ci(replicates: np.ndarray | None) -> list[float] | None:
    """The 2.5% and 97.5% percentiles of bootstrap replicates (NaNs dropped); None without any."""
    if replicates is None:
        return None
    r = replicates[np.isfinite(replicates)]
    if not len(r):
        return None
    lo, hi = np.percentile(r, [2.5, 97.5])
    return [float(lo), float(hi)]


def t_interval(values: Sequence[float], floor: float | None = None) -> dict:
    """Mean, sample standard deviation, n and the 95% Student-t interval of ``values`` (interval None
    when n < 2). ``floor``: the least value the quantity can take (0 for a rate); an interval bound
    below it is raised to it (with 2-3 noisy repeats a rate's interval can reach below 0)."""
    xs = [float(v) for v in values]
    n = len(xs)
    if not n:
        return {"mean": None, "std": None, "n": 0, "ci95": None}
    mean = sum(xs) / n
    if n < 2:
        return {"mean": mean, "std": None, "n": 1, "ci95": None}
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    t = _T975[n - 2] if n - 1 <= len(_T975) else 1.96
    half = t * sd / math.sqrt(n)
    lo = mean - half if floor is None else max(floor, mean - half)
    return {"mean": mean, "std": sd, "n": n, "ci95": [lo, mean + half]}


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

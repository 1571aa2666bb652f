"""The statistics every report number uses, on scipy.stats: bootstrap intervals, the sign-flip test,
Student-t intervals. Deterministic: every resampling takes a seed or a seeded generator.

    rng_for(seed, "usage", key)                     # a generator seeded from a key (order-independent)
    bootstrap_mean_ci(task_means, seed=0)           # 95% percentile bootstrap of a mean (one value per unit)
    bootstrap_ratios(num, den, rng=rng, b=B)           # replicates of sum(num)/sum(den) over resampled units
    percentile_ci(replicates)                       # their 2.5% and 97.5% percentiles (NaNs dropped)
    sign_flip_p(paired_differences, seed=0)         # two-sided permutation p-value of their mean
    t_interval(values), t_quantile(df)              # Student-t 95% interval over a few repeats

The unit of every resampling is what the caller passes as a row (a task's mean over its repeats, a
task's per-cluster sums, a paired difference, or an episode).
"""
from __future__ import annotations

import hashlib
import math
import warnings
from typing import Sequence

import numpy as np

# scipy.stats is imported where it is used: it is slow to import, and every `lis` command imports this
# module (through eval metrics) while few compute an interval.
CONFIDENCE = 0.95
EXACT_SIGN_FLIPS = 20  # at most this many non-zero differences: all 2**n sign patterns, else random ones


def rng_for(*key: object) -> np.random.Generator:
    """A generator seeded from ``key`` (stable across runs and machines, independent of call order)."""
    digest = hashlib.sha256(repr(key).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def percentile_ci(replicates: np.ndarray | None) -> list[float] | None:
    """The 2.5% and 97.5% percentiles of bootstrap replicates (non-finite ones dropped); None without any."""
    if replicates is None:
        return None
    r = np.asarray(replicates, dtype=float)
    r = r[np.isfinite(r)]
    if not r.size:
        return None
    lo, hi = np.percentile(r, [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2])
    return [float(lo), float(hi)]


def bootstrap_ratios(num: np.ndarray, den: np.ndarray, *, rng: np.random.Generator, b: int,
                     batch: int | None = 256) -> np.ndarray:
    """(b, k) bootstrap replicates of sum(num[:, j]) / sum(den) over rows (units) resampled together
    with replacement; a replicate whose denominator sums to 0 is NaN. A 1-D ``num`` gives (b,)
    replicates. One row: every replicate is its ratio (the exact bootstrap distribution); none: NaN."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    flat = num.ndim == 1
    cols = num[:, None] if flat else num
    k = cols.shape[1]
    if cols.shape[0] < 2:
        with np.errstate(invalid="ignore", divide="ignore"):
            point = cols.sum(axis=0) / den.sum() if cols.shape[0] else np.full(k, np.nan)
        out = np.tile(point, (b, 1))
        return out[:, 0] if flat else out

    def ratio_of_sums(d, *nums, axis=-1):
        with np.errstate(invalid="ignore", divide="ignore"):
            s = d.sum(axis=axis)
            return np.stack([x.sum(axis=axis) / s for x in nums])

    from scipy import stats

    with warnings.catch_warnings():  # a NaN replicate (denominator 0) is expected, not a degenerate CI
        warnings.simplefilter("ignore")
        res = stats.bootstrap((den, *cols.T), ratio_of_sums, n_resamples=b, batch=batch, vectorized=True,
                              paired=True, method="percentile", confidence_level=CONFIDENCE, rng=rng)
    reps = np.asarray(res.bootstrap_distribution, dtype=float).reshape(k, b).T
    return reps[:, 0] if flat else reps


def percentiles(values: Sequence[float], qs: Sequence[int] = (50, 99), digits: int = 3) -> dict[str, float] | None:
    """{"p50": ..., "p99": ...} of ``values`` (linear interpolation, numpy's default); None when empty."""
    xs = np.asarray([float(v) for v in values], dtype=float)
    if not xs.size:
        return None
    return {f"p{q}": round(float(np.percentile(xs, q)), digits) for q in qs}


ACCURACY_CI_RESAMPLES = 2000  # the accuracy interval of an eval job (metrics.json ci95; the lis Inspect tasks' ci95)


def accuracy_ci(item_means: Sequence[float]) -> list[float] | None:
    """The 95% interval of an eval's accuracy (metrics.json, the lis Inspect tasks' ``ci95``): a bootstrap
    over items (each item's mean over its repeats), seed 0."""
    return bootstrap_mean_ci(item_means, seed=0, n_resamples=ACCURACY_CI_RESAMPLES)


def bootstrap_mean_ci(values: Sequence[float], seed: int = 0, n_resamples: int = 4000) -> list[float] | None:
    """95% percentile bootstrap interval of the mean of ``values`` (one value per unit: a task's mean
    over its repeats, or a task's paired difference). One value: [v, v]; none: None."""
    xs = np.asarray([float(v) for v in values], dtype=float)
    if not xs.size:
        return None
    if xs.size == 1:
        return [float(xs[0]), float(xs[0])]
    from scipy import stats

    res = stats.bootstrap((xs,), np.mean, n_resamples=n_resamples, vectorized=True, method="percentile",
                          confidence_level=CONFIDENCE, rng=np.random.default_rng(seed))
    return percentile_ci(res.bootstrap_distribution)


def sign_flip_p(diffs: Sequence[float], seed: int = 0, n_resamples: int = 20000) -> float | None:
    """Two-sided p-value of the mean paired difference under random sign flips: the share of sign
    patterns whose |sum| reaches the observed |sum|. Zero differences carry no sign and are left out;
    exact up to EXACT_SIGN_FLIPS non-zero ones, else ``n_resamples`` seeded random patterns. None
    without differences, 1.0 when all are 0."""
    nonzero = np.asarray([float(d) for d in diffs if d != 0], dtype=float)
    if not nonzero.size:
        return 1.0 if len(diffs) else None
    if nonzero.size == 1:  # both sign patterns reach |d| (scipy wants two or more observations)
        return 1.0
    exact = nonzero.size <= EXACT_SIGN_FLIPS
    from scipy import stats

    res = stats.permutation_test((nonzero,), lambda x, axis=-1: np.abs(np.sum(x, axis=axis)),
                                 permutation_type="samples", vectorized=True, alternative="greater",
                                 n_resamples=2 ** nonzero.size if exact else n_resamples, batch=1 << 14,
                                 rng=np.random.default_rng(seed))
    return float(res.pvalue)


def t_quantile(df: int, q: float = (1 + CONFIDENCE) / 2) -> float:
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    from scipy import stats

    return float(stats.t.ppf(q, df))


def t_interval(values: Sequence[float], floor: float | None = None) -> dict:
    """Mean, sample standard deviation, n and the 95% Student-t interval of ``values`` (None when n < 2);
    a lower bound below ``floor`` (the least value the quantity can take, 0 for a rate) is raised to it."""
    xs = [float(v) for v in values]
    n = len(xs)
    if not n:
        return {"mean": None, "std": None, "n": 0, "ci95": None}
    mean = sum(xs) / n
    if n < 2:
        return {"mean": mean, "std": None, "n": 1, "ci95": None}
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t_quantile(n - 1) * sd / math.sqrt(n)
    lo = mean - half if floor is None else max(floor, mean - half)
    return {"mean": mean, "std": sd, "n": n, "ci95": [lo, mean + half]}

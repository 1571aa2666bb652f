"""Percentile bootstrap for the behaviour numbers (ratios of sums over resampled units).

Every number of the analysis is a ratio of sums over episodes: a usage rate is turns using the
capability / turns, an average is the sum of a quantity / episodes. The bootstrap resamples the
*units* — episodes (default) or tasks (all episodes of a task together, ``cluster: task``) — with
replacement, B times, and recomputes the ratio; the 95% interval is the 2.5th and 97.5th
percentiles. The generator is seeded from the settings' seed and the group's key, so a number
does not depend on the order groups are computed in. Fewer than 2 units: no interval.
"""
from __future__ import annotations

import hashlib

import numpy as np

CHUNK = 256


def rng_for(seed: int, *key: object) -> np.random.Generator:
    digest = hashlib.sha256(repr((seed, *key)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """sum(num, axis 0) / sum(den): NaN where the denominator is 0."""
    d = float(den.sum())
    return num.sum(axis=0) / d if d > 0 else np.full(num.shape[1:], np.nan)


def boot_ratios(num: np.ndarray, den: np.ndarray, b: int, rng: np.random.Generator) -> np.ndarray:
    """(b, k) bootstrap replicates of sum(num[:, j]) / sum(den) over resampled rows (units)."""
    n = num.shape[0]
    if n == 0:
        return np.full((b, num.shape[1]), np.nan)
    out = np.empty((b, num.shape[1]))
    for lo in range(0, b, CHUNK):
        hi = min(b, lo + CHUNK)
        idx = rng.integers(0, n, size=(hi - lo, n))
        d = den[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[lo:hi] = num[idx].sum(axis=1) / d[:, None]
    return out


def interval(reps: np.ndarray, n_units: int) -> list[float] | None:
    """The 95% percentile interval of one statistic's replicates (None below 2 units)."""
    if n_units < 2:
        return None
    r = reps[~np.isnan(reps)]
    if r.size == 0:
        return None
    lo, hi = np.percentile(r, [2.5, 97.5])
    return [float(lo), float(hi)]


def rounded(x, digits: int = 4):
    if x is None:
        return None
    if isinstance(x, list):
        return [rounded(v, digits) for v in x]
    x = float(x)
    return None if np.isnan(x) else round(x, digits)


def stat(value, reps: np.ndarray | None, n_units: int, digits: int = 4) -> dict:
    """{"value", "ci95"} of one statistic."""
    return {"value": rounded(value, digits), "ci95": rounded(interval(reps, n_units), digits) if reps is not None else None}

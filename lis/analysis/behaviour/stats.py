"""Point values and intervals of the behaviour numbers (ratios of sums over resampled units).

The bootstrap resamples episodes (default) or tasks (``cluster: task``) and recomputes the ratio
(:func:`lis.util.stats.bootstrap_ratios`); it is seeded from the settings' seed and the group's key,
so a number does not depend on the order groups are computed in. Fewer than 2 units: no interval.
"""
from __future__ import annotations

import numpy as np

from lis.util.stats import percentile_ci


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """sum(num, axis 0) / sum(den): NaN where the denominator is 0."""
    d = float(den.sum())
    return num.sum(axis=0) / d if d > 0 else np.full(num.shape[1:], np.nan)


def interval(reps: np.ndarray, n_units: int) -> list[float] | None:
    """The 95% percentile interval of one statistic's replicates (None below 2 units)."""
    return None if n_units < 2 else percentile_ci(reps)


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

"""How a number is shown: always with its n, accuracies with their 95% interval and error count, and a
dagger when it rests on fewer than ``min_n`` items (a 2-item smoke cell must never read like a result).

    fmt = Formatter(min_n=30)
    fmt.accuracy({"accuracy": 0.5, "ci95": [0.2, 0.8], "scored": 4, "errors": 1})
    # '50.0 [20.0, 80.0] · n 4 · 1 err †'
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from lis.report.paper_numbers import Reference

DAGGER = "†"
DASH = "–"


@dataclass(frozen=True)
class Cell:
    """One table cell: its text and an optional link (relative to the report folder) to the viewer's job page."""

    text: str
    href: str | None = None

    def __str__(self) -> str:
        return self.text


def linked(text: str, href: str | None) -> "Cell | str":
    """``text`` linked to ``href`` (a viewer page) when there is one."""
    return Cell(text, href) if href else text


def num(x: Any) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def pct(x: Any, digits: int = 1) -> str:
    v = num(x)
    return DASH if v is None else f"{100 * v:.{digits}f}"


def signed_pct(x: Any, digits: int = 1) -> str:
    v = num(x)
    return DASH if v is None else f"{100 * v:+.{digits}f}"


def interval(ci: Any, scale: float = 100.0, digits: int = 1) -> str:
    if not ci or not isinstance(ci, (list, tuple)) or len(ci) != 2 or num(ci[0]) is None or num(ci[1]) is None:
        return ""
    return f" [{scale * float(ci[0]):.{digits}f}, {scale * float(ci[1]):.{digits}f}]"


def plain(x: Any, digits: int = 1) -> str:
    v = num(x)
    if v is None:
        return DASH
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


@dataclass
class Formatter:
    """Formats numbers and keeps track of the footnotes they need (the dagger's meaning)."""

    min_n: int = 30
    small: bool = field(default=False)   # set once a cell was marked

    def mark(self, n: Any) -> str:
        try:
            small = n is None or int(n) < self.min_n
        except (TypeError, ValueError):
            small = True
        if small:
            self.small = True
            return f" {DAGGER}"
        return ""

    def dagger_note(self) -> str:
        return f"{DAGGER} n < {self.min_n}: not a result (too few items; report.min_n)."

    def accuracy(self, m: dict[str, Any] | None, missing: str = DASH) -> str:
        """'acc [lo, hi] · n k · e err' from a metrics record (eval metrics.json or a summary like it)."""
        if m is None:
            return missing
        n = m.get("scored", m.get("n"))
        errs = int(m.get("errors") or 0)
        if m.get("accuracy") is None:
            return f"{DASH} · n {n or 0} · {errs} err" + self.mark(n)
        return f"{pct(m['accuracy'])}{interval(m.get('ci95'))} · n {n} · {errs} err" + self.mark(n)

    def delta(self, d: dict[str, Any] | None) -> str:
        """A paired difference (lis.report.learning_check.paired) in points."""
        if not d or d.get("mean_difference") is None:
            return DASH
        n = d.get("n_pairs")
        return f"{signed_pct(d['mean_difference'])}{interval(d.get('ci95'))} · {n} pairs" + self.mark(n)

    def rate(self, r: dict[str, Any] | None, unit_n: Any = None) -> str:
        """A usage rate {value, ci95|lo/hi, ...} in percent with its n (turns or episodes)."""
        if not r or num(r.get("value")) is None:
            return DASH
        ci = r.get("ci95") or ([r.get("lo"), r.get("hi")] if "lo" in r else None)
        n = unit_n if unit_n is not None else r.get("n")
        return f"{pct(r['value'])}{interval(ci)}" + (f" · n {n}" if n is not None else "")

    def mean(self, r: dict[str, Any] | None, n: Any = None, digits: int = 1, scale: float = 1.0,
             mark: bool = True) -> str:
        """A mean {value|mean, ci95, n} in its own unit."""
        if not r:
            return DASH
        v = num(r.get("value", r.get("mean")))
        if v is None:
            return DASH
        n = n if n is not None else r.get("n")
        ci = r.get("ci95")
        body = plain(scale * v, digits) + interval(ci, scale, digits) if ci else plain(scale * v, digits)
        return body + (f" · n {n}" if n is not None else "") + (self.mark(n) if mark and n is not None else "")


def paper_value(ref: Reference | None, scale: float = 1.0, digits: int = 1) -> str:
    """The published number with its confidence (and 'not found' when the notes say so)."""
    if ref is None:
        return DASH
    if not ref.found:
        return "not found"
    v = ref.value
    if isinstance(v, bool):
        text = "✓" if v else "✗"
    elif isinstance(v, (int, float)):
        text = plain(v * scale, digits)
    else:
        text = str(v)
    return f"{text} ({ref.confidence})"


def difference(ours: Any, ref: Reference | None, scale: float = 100.0, digits: int = 1) -> str:
    """ours − paper, ours given as a fraction (scale 100 → points), paper in its table's unit."""
    o = num(ours)
    if ref is None or not ref.found or o is None or num(ref.value) is None:
        return DASH
    return f"{scale * o - float(ref.value):+.{digits}f}"

"""metrics.json of one job: accuracy with a 95% interval, n, errors, tokens, time, scorers.

An error is not a wrong answer: infrastructure failures and finished episodes that could not be
scored (``unscored``) are left out of the accuracy and counted in ``errors``, ``error_kinds`` and
``error_share``.
"""
from __future__ import annotations

import math
import statistics as st
from collections import Counter, defaultdict
from typing import Any

from lis.agent.trajectory import Trajectory
from lis.eval.journal import INFRA
from lis.util.stats import accuracy_ci, percentiles


def compute_metrics(records: list[Trajectory], job: dict[str, str], expected: int, wall_s: float) -> dict[str, Any]:
    scored = [r for r in records if r.reward is not None]
    by_item: dict[str, list[float]] = defaultdict(list)
    for r in scored:
        by_item[r.task_id].append(float(r.reward))
    item_means = [sum(v) / len(v) for v in by_item.values()]
    acc = sum(r.reward for r in scored) / len(scored) if scored else float("nan")
    ci = accuracy_ci(item_means)  # over items: repeats of an item stay together
    per_repeat = defaultdict(list)
    for r in scored:
        per_repeat[r.repeat].append(float(r.reward))
    repeat_means = [sum(v) / len(v) for v in per_repeat.values()]
    n = len(records)
    scorers = Counter((r.score or {}).get("scorer", "?") for r in scored)
    kinds = Counter(r.termination if r.termination in INFRA else "unscored" for r in records if r.reward is None)
    return {
        **job,
        "n": n, "expected": expected, "items": len(by_item), "scored": len(scored),
        "accuracy": None if math.isnan(acc) else round(acc, 4),
        "ci95": None if ci is None else [round(ci[0], 4), round(ci[1], 4)],
        "per_repeat_std": round(st.pstdev(repeat_means), 4) if len(repeat_means) > 1 else None,
        "errors": sum(kinds.values()),
        "error_kinds": dict(kinds),
        "error_share": round(sum(kinds.values()) / n, 4) if n else None,
        "terminations": dict(Counter(r.termination for r in records)),
        "scorers": dict(scorers),
        "turns_mean": round(sum(r.turns for r in records) / n, 2) if n else None,
        "tokens": {"prompt": sum(r.prompt_tokens for r in records), "completion": sum(r.completion_tokens for r in records),
                   "cached": sum(r.cached_tokens for r in records)},
        "time_s": {"wall": round(wall_s, 2), "episodes": round(sum(r.wall_s for r in records), 2),
                   "llm": round(sum(r.llm_s for r in records), 2), "env": round(sum(r.env_s for r in records), 2)},
        "sandboxes": sandbox_stats(records),
    }


def sandbox_stats(records: list[Trajectory]) -> dict[str, Any] | None:
    """How long sandboxes took to start and episodes waited for one (a pool slot, the host's start
    admission): p50 and p99 over the episodes that had a sandbox; None in vanilla mode."""
    boxed = [r for r in records if r.mode != "vanilla" and (r.sandbox_start_s or r.acquire_wait_s)]
    if not boxed:
        return None
    return {"episodes": len(boxed), "start_s": percentiles([r.sandbox_start_s for r in boxed]),
            "acquire_wait_s": percentiles([r.acquire_wait_s for r in boxed])}

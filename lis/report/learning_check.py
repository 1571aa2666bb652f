"""The learning check: does GRPO in the sandbox beat its SFT start on held-out context tasks?

    check = learning_check({"base": recs, "sft": recs, "grpo-files": recs, "llm-rl": recs},
                           treatment="grpo-files", control="sft")

Inputs are each model's trajectory records of the held-out context tasks (sandbox mode). Per
model: the mean reward with a bootstrap interval over tasks (infrastructure errors left out and
counted). Treatment and control are compared *paired by task*, a task's reward being the mean of
its repeats (repeats of one task are not independent pairs): the mean difference with a paired
bootstrap interval, tasks won / lost / tied, and a sign-flip permutation p-value.
"""
from __future__ import annotations

from typing import Any

from lis.util.stats import bootstrap_mean_ci, sign_flip_p

N_BOOT = 4000
N_PERM = 20000


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def bootstrap_ci(values: list[float], seed: int = 0, n: int = N_BOOT) -> list[float] | None:
    """95% percentile bootstrap interval of the mean over tasks (:func:`lis.util.stats.bootstrap_mean_ci`), rounded."""
    ci = bootstrap_mean_ci(values, seed=seed, n_resamples=n)
    return None if ci is None else [round(ci[0], 4), round(ci[1], 4)]


def _scored(records: list[dict[str, Any]]) -> dict[tuple[str, int], float]:
    """reward by episode (task id, repeat) of the scored episodes."""
    return {(r["task_id"], r.get("repeat", 0)): float(r["reward"]) for r in records if r.get("reward") is not None}


def _by_task(records: list[dict[str, Any]]) -> dict[str, float]:
    """mean reward over its scored repeats, by task."""
    rewards: dict[str, list[float]] = {}
    for (task, _repeat), reward in _scored(records).items():
        rewards.setdefault(task, []).append(reward)
    return {task: sum(xs) / len(xs) for task, xs in rewards.items()}


def model_summary(records: list[dict[str, Any]], seed: int = 0) -> dict[str, Any]:
    rewards = list(_scored(records).values())
    tasks = list(_by_task(records).values())
    return {"n": len(records), "scored": len(rewards), "errors": len(records) - len(rewards), "tasks": len(tasks),
            "accuracy": round(_mean(rewards), 4) if rewards else None, "ci95": bootstrap_ci(tasks, seed),
            "solved": sum(1 for x in rewards if x >= 1.0)}


def paired(treatment: list[dict[str, Any]], control: list[dict[str, Any]], seed: int = 0) -> dict[str, Any]:
    a, b = _by_task(treatment), _by_task(control)
    keys = sorted(set(a) & set(b))
    diffs = [a[k] - b[k] for k in keys]
    return {"n_pairs": len(keys), "mean_difference": round(_mean(diffs), 4) if diffs else None,
            "ci95": bootstrap_ci(diffs, seed), "wins": sum(d > 0 for d in diffs), "losses": sum(d < 0 for d in diffs),
            "ties": sum(d == 0 for d in diffs), "p_value": sign_flip_p(diffs, seed=seed, n_resamples=N_PERM),
            "unpaired": len(set(a) ^ set(b))}


def learning_check(records_by_model: dict[str, list[dict[str, Any]]], treatment: str, control: str,
                   seed: int = 0) -> dict[str, Any]:
    """Per-model summaries and the paired comparison of ``treatment`` against ``control``."""
    out = {"models": {m: model_summary(r, seed) for m, r in records_by_model.items()},
           "treatment": treatment, "control": control, "comparison": None}
    if treatment in records_by_model and control in records_by_model:
        out["comparison"] = paired(records_by_model[treatment], records_by_model[control], seed)
    return out


def verdict(check: dict[str, Any], alpha: float = 0.05) -> str:
    """One sentence saying what the numbers say (never more)."""
    c = check.get("comparison")
    if not c or not c["n_pairs"]:
        return "no paired episodes: the comparison could not be made"
    t, k = check["treatment"], check["control"]
    d, p = c["mean_difference"], c["p_value"]
    if p is not None and p < alpha and d > 0:
        return f"{t} beats {k} on the held-out tasks (mean difference {d:+.3f}, p = {p:.3g}, n = {c['n_pairs']} pairs)"
    if p is not None and p < alpha and d < 0:
        return f"{t} is worse than {k} on the held-out tasks (mean difference {d:+.3f}, p = {p:.3g}, n = {c['n_pairs']})"
    return (f"no significant difference between {t} and {k} on the held-out tasks (mean difference {d:+.3f}, "
            f"p = {p:.3g}, n = {c['n_pairs']} pairs)")

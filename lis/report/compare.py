"""Two training runs, step by step (``lis train compare``): do they pair, and where do they part?

    summary = compare_runs({"seed 0": "runs/a/train_log.csv", "seed 0, again": "runs/b/train_log.csv"}, out)

Two runs pair at a step when they drew the same prompts (``task_ids``); they are the same run up to
a step when every ``episodes_sha256`` so far is equal. The summary gives the paired steps, the first
step whose episodes differ, and the mean paired reward difference with a t-interval (steps are not
independent: a description, not a test).
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.report.figures import _style
from lis.util.stats import t_interval


def read_log(path: Path) -> list[dict[str, str]]:
    """A train_log.csv's rows; LisError naming the file when it is missing or has no step column."""
    path = Path(path)
    if not path.is_file():
        raise LisError(f"no training log at {path}", "give a GRPO run's train_log.csv (data/train/runs/<run>/)")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and "step" not in rows[0]:
        raise LisError(f"{path} is not a train_log.csv (no step column)", "give a GRPO run's train_log.csv")
    return rows


def _num(x: Any) -> float | None:
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def compare_runs(logs: dict[str, Path], out: Path) -> dict[str, Any]:
    """Pair two runs' logs by step; write ``out``.png/.pdf; return the summary (see the module doc)."""
    if len(logs) != 2:
        raise LisError(f"compare takes two runs (got {len(logs)})", "give two train_log.csv files")
    (name_a, path_a), (name_b, path_b) = logs.items()
    a = {int(_num(r["step"]) or 0): r for r in read_log(path_a)}
    b = {int(_num(r["step"]) or 0): r for r in read_log(path_b)}
    both = sorted(set(a) & set(b))
    logged = all(r.get("task_ids") for r in [*a.values(), *b.values()])
    paired = [s for s in both if logged and a[s]["task_ids"] == b[s]["task_ids"]]
    hashed = all(r.get("episodes_sha256") for r in [*a.values(), *b.values()])
    first_diff = next((s for s in both if not hashed or a[s]["episodes_sha256"] != b[s]["episodes_sha256"]), None)
    diffs = [_num(b[s]["reward_mean"]) - _num(a[s]["reward_mean"]) for s in paired
             if _num(a[s]["reward_mean"]) is not None and _num(b[s]["reward_mean"]) is not None]
    ti = t_interval(diffs)
    summary = {"runs": {name_a: str(path_a), name_b: str(path_b)}, "steps": {name_a: len(a), name_b: len(b)},
               "common_steps": len(both), "paired_steps": len(paired),
               "identical_steps": (first_diff - both[0]) if first_diff is not None and both else len(both),
               "first_step_with_other_episodes": first_diff if hashed else None,
               "episode_hashes_logged": hashed, "task_ids_logged": logged,
               "reward_difference": {"mean": ti["mean"], "ci95": ti["ci95"], "n": ti["n"],
                                     "of": f"{name_b} - {name_a}, paired steps"},
               "figure": [str(out.with_suffix(".png")), str(out.with_suffix(".pdf"))]}
    _figure(name_a, name_b, a, b, both, paired, first_diff if hashed else None, out)
    return summary


def _figure(name_a: str, name_b: str, a: dict, b: dict, both: list[int], paired: list[int], first_diff: int | None,
            out: Path) -> None:
    with _style() as (plt, sns):
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 4.6), sharex=True, layout="constrained",
                                          height_ratios=(2, 1))
        colours = sns.color_palette("deep", 2)
        for (name, rows), colour, style in zip(((name_a, a), (name_b, b)), colours, ("-", "--")):
            pts = sorted((s, _num(r["reward_mean"])) for s, r in rows.items() if _num(r["reward_mean"]) is not None)
            top.plot([p[0] for p in pts], [p[1] for p in pts], style, color=colour, label=name, linewidth=1.6)
        if first_diff is not None:
            top.axvline(first_diff, color="0.5", linewidth=0.8, linestyle=":")
            top.text(first_diff, top.get_ylim()[1], f" episodes differ from step {first_diff}", va="top", ha="left",
                     fontsize=8, color="0.3")
        top.set(ylabel="reward (mean of the step)")
        top.legend(frameon=False, loc="lower right")
        d = [(s, _num(b[s]["reward_mean"]) - _num(a[s]["reward_mean"])) for s in both
             if _num(a[s]["reward_mean"]) is not None and _num(b[s]["reward_mean"]) is not None]
        bottom.axhline(0, color="0.6", linewidth=0.8)
        bottom.bar([p[0] for p in d], [p[1] for p in d], color=["0.35" if p[0] in paired else "0.75" for p in d],
                   width=0.8)
        bottom.set(xlabel="step", ylabel="difference\n(dashed − solid)")
        bottom.set_title("grey: the steps drew other prompts (or did not log them)" if len(paired) < len(d) else "",
                         fontsize=8, color="0.4", loc="left")
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out.with_suffix(".png"), dpi=150, metadata={"Software": None})
        fig.savefig(out.with_suffix(".pdf"), metadata={"CreationDate": None, "Creator": None, "Producer": None})
        plt.close(fig)

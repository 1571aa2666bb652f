"""The learning check over seeds: each replicate's GRPO − SFT on the held-out tasks, then their mean
with an interval over seeds.

    table, result = replicates_table(ctx)     # jobs.replicates non-empty; replicate 0 is the main run

One seed's paired interval (:mod:`lis.report.learning_check`) says nothing of how much the
difference moves when SFT and GRPO are trained again with other seeds. Replicate r trains SFT and
GRPO with their seeds + r (workflow/rules/replicates.smk); the pooled row is the mean of the k
per-seed differences with a Student-t interval over seeds: the unit is the training run, not the task.
"""
from __future__ import annotations

import math
from typing import Any

from lis.report.cells import DASH
from lis.report.inputs import LEARNING_DOMAIN, REPLICATE_MODELS
from lis.report.learning_check import model_summary, paired
from lis.report.tables import Table
from lis.util.stats import t_quantile


def over_seeds(diffs: list[float]) -> dict[str, Any]:
    """Mean, sample sd, k and the 95 % Student-t interval (df k − 1) of per-seed differences."""
    k = len(diffs)
    if not k:
        return {"k": 0, "mean": None, "sd": None, "ci95": None}
    mean = sum(diffs) / k
    if k < 2:
        return {"k": 1, "mean": round(mean, 4), "sd": None, "ci95": None}
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (k - 1))
    half = t_quantile(k - 1) * sd / math.sqrt(k)
    return {"k": k, "mean": round(mean, 4), "sd": round(sd, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)]}


def _seed(record: dict[str, Any] | None, *path: str) -> Any:
    for key in path:
        if not isinstance(record, dict):
            return None
        record = record.get(key)
    return record


def replicates_table(ctx) -> tuple[Table, dict[str, Any] | None]:
    """The table (and its raw result for index.json); waiting when jobs.replicates is empty."""
    reps = [0, *ctx.inputs.replicates]
    cols = ["Replicate", "SFT seed", "GRPO seed", "sft (held-out)", "grpo-files (held-out)", "Δ grpo − sft (paired)",
            "Wins / losses / ties", "p (sign flip)"]
    t = Table("learning_check_seeds", "Learning check over seeds",
              f"Held-out context tasks ({LEARNING_DOMAIN}, sandbox mode): GRPO (files) − its SFT start, per training "
              "seed, and the mean over seeds", cols, [], [], sections=["jobs", "sft", "grpo"],
              paper="Paper: no published number (our own check that training learned something, across seeds).")
    if not ctx.inputs.replicates:
        t.waiting = ("one seed only (jobs.replicates is empty): set jobs.replicates: [1, 2] for three seeds "
                     "(docs/training.md, 'The learning check over seeds')")
        return t, None
    per: list[dict[str, Any]] = []
    for r in reps:
        recs = {}
        for m in REPLICATE_MODELS:
            job = ctx.inputs.replicate_job(r, m)
            recs[m] = ctx.reader.jsonl(job.trajectories)
            t.inputs.append(job.trajectories)
        m_rel, _ = ctx.inputs.run_files(ctx.inputs.replicate_run(r))
        run = ctx.reader.json(m_rel)
        sft_dir = "sft" if r == 0 else f"replicates/r{r}/sft"
        sft_manifest = ctx.reader.model_manifest(sft_dir)
        comp = paired(recs["grpo-files"], recs["sft"])
        row = {"replicate": r, "sft_seed": _seed(sft_manifest, "settings", "seed"),
               "grpo_seed": _seed(run, "settings", "seed"),
               "sft": model_summary(recs["sft"]), "grpo": model_summary(recs["grpo-files"]), "paired": comp}
        per.append(row)
        t.rows.append([f"{r} (main run)" if r == 0 else str(r), str(row["sft_seed"]), str(row["grpo_seed"]),
                       ctx.fmt.accuracy(row["sft"]), ctx.fmt.accuracy(row["grpo"]), ctx.fmt.delta(comp),
                       f"{comp['wins']} / {comp['losses']} / {comp['ties']}",
                       DASH if comp["p_value"] is None else f"{comp['p_value']:.3g}"])
        t.records.append({"replicate": r, "sft_seed": row["sft_seed"], "grpo_seed": row["grpo_seed"],
                          "sft_accuracy": row["sft"]["accuracy"], "grpo_accuracy": row["grpo"]["accuracy"],
                          **{f"paired_{k}": comp.get(k) for k in ("n_pairs", "mean_difference", "ci95", "wins",
                                                                   "losses", "ties", "p_value")}})
    diffs = [p["paired"]["mean_difference"] for p in per if p["paired"]["mean_difference"] is not None]
    pooled = over_seeds(diffs)
    ci = pooled["ci95"]
    cell = DASH if pooled["mean"] is None else (f"{100 * pooled['mean']:+.1f} pts" + (
        f" [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}] · k {pooled['k']} seeds" if ci else f" · k {pooled['k']}"))
    t.rows.append(["mean over seeds", DASH, DASH, DASH, DASH, cell,
                   f"{sum(d > 0 for d in diffs)} / {sum(d < 0 for d in diffs)} / {sum(d == 0 for d in diffs)} seeds",
                   DASH])
    t.records.append({"replicate": "mean", "k": pooled["k"], "paired_mean_difference": pooled["mean"],
                      "sd_over_seeds": pooled["sd"], "ci95_over_seeds": ci})
    t.notes = ["Per seed: mean reward [95 % bootstrap interval over tasks]; Δ: mean paired difference "
               "[95 % paired bootstrap over tasks] · pairs (that trained pair's uncertainty over the tasks).",
               "Mean over seeds: the mean of the per-seed Δ with a 95 % Student-t interval over seeds (df k − 1): the "
               "run-to-run spread of the recipe. Replicate r trains SFT with sft.seed + r and GRPO with grpo.seed + r "
               "from the same base model and teacher episodes."]
    return t, {"replicates": per, "over_seeds": pooled}

"""What the deterministic rollout mode costs, and what it buys (``lis bench determinism``).

    bench_modes(policy, tasks, agent_cfg, sandbox_config, settings, grpo, steps=6)

GRPO's rollout steps on the policy as it is (nothing is trained), each run in the default mode and the
deterministic (lockstep) one, in alternating order on one warm pool. Reported: each mode's seconds per
step, the paired ratio deterministic / default with a t-interval, and sampled tokens. Then the first
step runs twice more in each mode: ``repeat_identical`` says whether its episodes came out the same.
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Callable

from lis.sandbox.pool import SandboxPool
from lis.train.rollout.group import run_group
from lis.util.stats import t_interval


def bench_modes(policy: Any, tasks: list, agent_cfg, sandbox_config, settings, grpo, steps: int = 6,
                progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    per_step = grpo.prompts_per_step * grpo.samples_per_prompt
    modes = {"default": dataclasses.replace(settings, deterministic=False),
             "deterministic": dataclasses.replace(settings, deterministic=True)}

    def step_batch(k: int) -> tuple[list, list[int]]:
        prompts = [tasks[(k * grpo.prompts_per_step + j) % len(tasks)] for j in range(grpo.prompts_per_step)]
        batch = [t for t in prompts for _ in range(grpo.samples_per_prompt)]
        seeds = [(grpo.seed * 1_000_003 + k * 10_007 + i) % (2 ** 31) for i in range(len(batch))]
        return batch, seeds

    def rollout(mode: str, k: int, pool) -> dict[str, Any]:
        batch, seeds = step_batch(k)
        t0 = time.monotonic()
        out = run_group(batch, policy, agent_cfg, modes[mode], pool=pool, seeds=seeds)
        return {"s": time.monotonic() - t0, "sampled_tokens": sum(r.stats["sampled_tokens"] for r in out),
                "turns": sum(r.stats["turns"] for r in out), "errors": sum(1 for r in out if r.error),
                "sha": [r.stats["tokens_sha256"] for r in out]}

    rows = []
    workers = min(per_step, int(grpo.sandbox_workers))
    with SandboxPool(sandbox_config, max_concurrent=workers, warm=workers) as pool:
        pool.wait_ready(workers, timeout_s=120)
        for k in range(steps):
            order = ("default", "deterministic") if k % 2 == 0 else ("deterministic", "default")
            got = {}
            for mode in order:
                if progress:
                    progress(f"step {k + 1}/{steps}: {mode}")
                got[mode] = rollout(mode, k, pool)
            rows.append({"step": k + 1, **{f"{m}_{key}": got[m][key] for m in modes
                                          for key in ("s", "sampled_tokens", "turns", "errors")}})
        repeats = {}
        for mode in modes:
            if progress:
                progress(f"repeat of step 1: {mode}")
            first, second = rollout(mode, 0, pool), rollout(mode, 0, pool)
            repeats[mode] = {"identical": first["sha"] == second["sha"],
                             "episodes_differing": sum(a != b for a, b in zip(first["sha"], second["sha"]))}
    ratios = [r["deterministic_s"] / r["default_s"] for r in rows if r["default_s"] > 0]
    logs = t_interval([math.log(x) for x in ratios])
    ratio = {"geomean": round(math.exp(logs["mean"]), 3) if logs["mean"] is not None else None,
             "ci95": [round(math.exp(v), 3) for v in logs["ci95"]] if logs["ci95"] else None, "n": len(ratios)}
    mean = {m: round(sum(r[f"{m}_s"] for r in rows) / len(rows), 2) for m in modes} if rows else {}
    return {"steps": steps, "episodes_per_step": per_step, "slots": workers, "mean_rollout_s": mean,
            "ratio_deterministic_over_default": ratio, "under_1_5x": bool(ratio["geomean"] is not None and ratio["geomean"] < 1.5),
            "repeat_of_step_1": repeats, "per_step": [{k: round(v, 2) if isinstance(v, float) else v
                                                      for k, v in r.items()} for r in rows]}

"""How long a GRPO group takes against its episodes alone (``lis bench rollout``).

    bench_group(policy, task, agent_cfg, sandbox_config, samples=8)

The same ``samples`` episodes of one task run one after the other, each alone (pool of 1), then all at
once (pool of ``samples``, turns batched by the engine). The claim checked: the group finishes within
1.5× the longest episode alone. The group runs once more with the engine's prefix cache on
(:data:`BENCH_PREFIX_CACHE_MB`; off in GRPO) to measure its speed-up.
"""
from __future__ import annotations

import time
from typing import Any

from lis.sandbox.pool import SandboxPool
from lis.train.rollout.group import run_episode, run_group

BENCH_PREFIX_CACHE_MB = 256   # the engine's prefix cache in the second group (off by default)


def bench_group(policy: Any, task: Any, agent_cfg, sandbox_config, settings, samples: int = 8,
                seed: int = 0) -> dict[str, Any]:
    seeds = [seed + i for i in range(samples)]
    alone = []
    with SandboxPool(sandbox_config, max_concurrent=1, warm=1) as pool:
        time.sleep(1.0)
        for s in seeds:
            t0 = time.monotonic()
            r = run_episode(task, policy, agent_cfg, settings, pool=pool, seed=s)
            alone.append({"wall_s": time.monotonic() - t0, "turns": r.stats["turns"],
                          "termination": r.stats["termination"], "tokens": r.stats["episode_tokens"]})

    def timed_group(prefix_cache_mb: float | None) -> tuple[list, float, dict]:
        policy.close()                        # a fresh engine with this prefix cache
        policy.prefix_cache_mb = prefix_cache_mb
        with SandboxPool(sandbox_config, max_concurrent=samples, warm=samples) as pool:
            pool.wait_ready(samples, timeout_s=60)  # time episodes, not container starts
            t0 = time.monotonic()
            out = run_group([task] * samples, policy, agent_cfg, settings, pool=pool, seeds=seeds)
            took = time.monotonic() - t0
        return out, took, dict(policy.engine.stats)

    group, group_s, stats = timed_group(None)                       # the engine as GRPO runs it
    _, cached_s, cached_stats = timed_group(BENCH_PREFIX_CACHE_MB)
    policy.close()
    policy.prefix_cache_mb = None
    longest_alone = max(a["wall_s"] for a in alone)
    longest_in_group = max(r.stats["wall_s"] for r in group)
    sequential = sum(a["wall_s"] for a in alone)
    return {
        "episodes": samples, "task": task.id,
        "sequential_s": round(sequential, 2), "longest_alone_s": round(longest_alone, 2),
        "group_s": round(group_s, 2), "longest_in_group_s": round(longest_in_group, 2),
        "group_over_longest_alone": round(group_s / longest_alone, 2) if longest_alone else None,
        "group_over_longest_in_group": round(group_s / longest_in_group, 2) if longest_in_group else None,
        "speedup_vs_sequential": round(sequential / group_s, 2) if group_s else None,
        "within_1_5x_longest": group_s <= 1.5 * longest_alone,
        "group_with_prefix_cache_s": round(cached_s, 2),
        "prefix_cache_mb": BENCH_PREFIX_CACHE_MB,
        "prefix_cache_speedup": round(group_s / cached_s, 2) if cached_s else None,
        "prefill_tokens": stats.get("prefill_tokens"),
        "prefill_tokens_with_prefix_cache": cached_stats.get("prefill_tokens"),
        "prefix_hits": cached_stats.get("prefix_hits"),
        "turns_alone": [a["turns"] for a in alone], "turns_group": [r.stats["turns"] for r in group],
        "terminations_group": [r.stats["termination"] for r in group],
    }

"""``lis bench inspect``: what Inspect AI sees of our sandbox, through the ``lis`` provider, against
Inspect's own ``local`` (no isolation: the floor) and ``docker`` providers, with the same calls:
sample set-up (cold), clean-up, and the latency of ``exec(["true"])`` and ``exec(["cat"], input=...)``.
"""
from __future__ import annotations

import subprocess
import time
from typing import Any, Callable

from lis.bench.sandbox import _ms
from lis.inspect.config import LisSandboxConfig, sandbox_config

INPUT = "x" * 1024


def compose_v2() -> str | None:
    """The ``docker compose`` v2 version, or None where there is none."""
    try:
        r = subprocess.run(["docker", "compose", "version", "--short"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


async def _provider(name: str, config: Any, samples: int, calls: int, progress: Callable[[str], None]) -> dict:
    from inspect_ai._util.entrypoints import ensure_entry_points
    from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

    ensure_entry_points()
    cls = registry_find_sandboxenv(name)
    task = f"lis-bench-{name}"
    await cls.task_init(task, config)
    setup, cleanup, true_s, cat_s = [], [], [], []
    try:
        for i in range(samples):
            progress(f"{name}: sample {i + 1}/{samples}")
            t0 = time.perf_counter()
            envs = await cls.sample_init(task, config, {})
            setup.append(time.perf_counter() - t0)
            env = next(iter(envs.values()))
            try:
                for _ in range(calls if i == 0 else 0):
                    t0 = time.perf_counter()
                    r = await env.exec(["true"])
                    true_s.append(time.perf_counter() - t0)
                    assert r.success, r
                    t0 = time.perf_counter()
                    r = await env.exec(["cat"], input=INPUT)
                    cat_s.append(time.perf_counter() - t0)
                    assert r.stdout == INPUT, r
            finally:
                t0 = time.perf_counter()
                await cls.sample_cleanup(task, config, envs, False)
                cleanup.append(time.perf_counter() - t0)
    finally:
        await cls.task_cleanup(task, config, True)
    return {"sample_init": _ms(setup), "sample_cleanup": _ms(cleanup), "exec_true": _ms(true_s),
            "exec_cat_1kib": _ms(cat_s)}


def _ratio(a: dict, b: dict, key: str) -> float | None:
    x, y = a.get(key, {}).get("median_ms"), b.get(key, {}).get("median_ms")
    return round(x / y, 2) if x and y else None


def bench_inspect(backend: str | None, samples: int, calls: int, docker: bool = True,
                  progress: Callable[[str], None] = lambda s: None) -> dict:
    import anyio

    lis_cfg = LisSandboxConfig(backend=backend, warm=0)  # type: ignore[arg-type]
    out: dict[str, Any] = {"samples": samples, "calls": calls, "providers": {}}

    async def main() -> None:
        out["providers"]["lis"] = await _provider("lis", lis_cfg, samples, calls, progress)
        out["providers"]["local"] = await _provider("local", None, samples, calls, progress)
        version = compose_v2() if docker else None
        if version:
            out["providers"]["docker"] = await _provider("docker", None, samples, calls, progress)
            out["docker_compose"] = version
        else:
            out["docker"] = "skipped: " + ("--no-docker" if not docker else "no `docker compose` v2 here")

    anyio.run(main)
    out["lis_backend"] = sandbox_config(lis_cfg, "probe")[0].backend
    p = out["providers"]
    keys = ("sample_init", "exec_true", "exec_cat_1kib")
    out["ratios"] = {"lis_over_local": {k: _ratio(p["lis"], p["local"], k) for k in keys}}
    if "docker" in p:
        out["ratios"]["docker_over_lis"] = {k: _ratio(p["docker"], p["lis"], k) for k in keys}
    return out

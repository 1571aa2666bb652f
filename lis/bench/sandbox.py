"""``lis bench sandbox``: what one tool call and one sandbox cost, measured against the baseline
(a plain ``docker exec`` per command, as llm-in-sandbox 0.2 does) in the same run, and what one
sandbox holds in memory, idle and busy (:mod:`lis.bench.memory`)."""
from __future__ import annotations

import dataclasses
import statistics as st
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from lis.agent.tools.dispatch import ToolSettings, execute_tool_call
from lis.bench.memory import measure_memory
from lis.errors import LisError
from lis.sandbox.base import SandboxConfig
from lis.sandbox.factory import make_sandbox
from lis.sandbox.pool import SandboxPool


def _ms(xs: list[float]) -> dict[str, float]:
    """Median (p50), p90 and p99 in ms, interpolated between the nearest samples (numpy's default),
    so that p50 <= p90 <= p99 for any n (read p99 with ``n``: of 5 starts it is near the slowest)."""
    if not xs:
        return {"n": 0}
    xs = sorted(xs)

    def at(q: float) -> float:
        pos = q * (len(xs) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        return round(1000 * (xs[lo] + (pos - lo) * (xs[hi] - xs[lo])), 3)

    return {"n": len(xs), "median_ms": at(0.5), "p90_ms": at(0.9), "p99_ms": at(0.99)}


def check_counts(**counts: int) -> None:
    """Refuse counts that cannot be measured (before any sandbox starts): one line, a LisError.
    ``n_memory`` may be 0 (skip the memory measurement); every other count must be at least 1."""
    for name, value in counts.items():
        least = 0 if name == "n_memory" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            flag = {"n_memory": "--memory-n"}.get(name, "--" + name.replace("_", "-"))
            raise LisError(f"lis bench sandbox: {flag} must be a whole number of at least {least}, not {value!r}",
                           f"e.g. {flag} {max(least, 1) if name != 'n_echo' else 200}")


def _timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def bench_sandbox(config: SandboxConfig, *, n_echo: int = 200, n_starts: int = 5, concurrent: int = 64,
                  commands: int = 20, warm: int = 4, n_memory: int = 3,
                  progress: Callable[[str], None] = lambda s: None) -> dict:
    check_counts(n_echo=n_echo, n_starts=n_starts, concurrent=concurrent, commands=commands, warm=warm,
                 n_memory=n_memory)
    res: dict[str, Any] = {"backend": config.backend, "image": config.image or config.rootfs}
    settings = ToolSettings(command_timeout_s=config.command_timeout_s,
                            max_output_bytes=config.limits.max_output_bytes)

    progress("round trip of `echo hi`")
    with make_sandbox(config).start() as sb:
        for _ in range(10):  # warm-up
            sb.exec("echo hi")
        ours = _timed(lambda: execute_tool_call(sb, "execute_bash", {"command": "echo hi"}, settings), n_echo)
        res["execute_bash_echo"] = _ms(ours)
        res["session_exec_echo"] = _ms(_timed(lambda: sb.exec("echo hi"), n_echo))
        if config.backend == "docker":
            base = _timed(lambda: sb.raw_exec(["echo", "hi"]), max(20, n_echo // 5))
            res["raw_exec_run_echo"] = _ms(base)
            res["speedup_vs_exec_run"] = round(st.median(base) / st.median(ours), 1)

    if n_memory:
        progress(f"memory, idle and busy ({n_memory} sandboxes)")
        try:
            res["memory"] = measure_memory(config, n=n_memory)
            res["memory"]["workload"].pop("script")
            res["idle_memory_mib"] = res["memory"]["idle_mib"]["mean"]
            res["busy_peak_memory_mib"] = res["memory"]["busy_peak_mib"]["mean"]
        except LisError as e:  # bubblewrap without a cgroup: no memory numbers, the rest stands
            res["memory"] = {"error": e.one_line()}

    progress(f"start time ({n_starts} sandboxes)")
    starts = []
    for _ in range(n_starts):
        t0 = time.perf_counter()
        sb = make_sandbox(config).start()
        starts.append(time.perf_counter() - t0)
        sb.close()
    res["start"] = _ms(starts)

    progress(f"acquire from a warm pool (warm={warm})")
    with SandboxPool(config, max_concurrent=warm, warm=warm) as pool:
        acquires = []
        for _ in range(2 * warm):
            deadline = time.monotonic() + 60
            while pool._ready.qsize() < warm and time.monotonic() < deadline:
                time.sleep(0.05)
            t0 = time.perf_counter()
            sb = pool.acquire()
            acquires.append(time.perf_counter() - t0)
            pool.release(sb)
        res["acquire_warm"] = _ms(acquires)

    progress(f"{concurrent} concurrent sandboxes x {commands} commands")
    errors: list[str] = []
    lock = threading.Lock()

    def episode(i: int) -> None:
        try:
            with make_sandbox(dataclasses.replace(config)).start() as sb:
                for j in range(commands):
                    r = sb.exec(f"echo {i}-{j}")
                    if r.stdout != f"{i}-{j}\n":
                        raise AssertionError(f"sandbox {i} command {j}: got {r.stdout!r}")
        except Exception as e:
            with lock:
                errors.append(f"{type(e).__name__}: {e}")

    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrent) as ex:
        list(ex.map(episode, range(concurrent)))
    res["concurrent"] = {"sandboxes": concurrent, "commands_each": commands,
                         "wall_s": round(time.perf_counter() - t0, 2), "errors": len(errors),
                         "first_errors": errors[:3]}
    return res

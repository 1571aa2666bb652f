"""Queries per minute, vanilla vs sandbox, against one model endpoint (``lis throughput``).

A fixed task list runs through the real agent (:func:`lis.agent.episode.run_task`; sandbox mode
through a real sandbox pool) at a fixed concurrency, once per mode per repeat, after ``warmup``
untimed episodes per mode; modes alternate order between repeats so that a drift of the endpoint
does not favour one mode. Episodes are fresh: no journal is read or written.

QPM = completed queries / (wall seconds / 60); infrastructure errors are counted apart, and a run
with more than ``max_error_share`` of them fails instead of publishing a number. Per mode: the mean
over repeats with a Student-t interval; mode/vanilla is the geometric mean of the per-repeat ratios
(docs/efficiency.md defines every number).
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import platform
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Iterator

from lis.agent.episode import run_task
from lis.agent.loop import AgentConfig
from lis.analysis.efficiency_stats import geometric_interval, rounded, t_interval
from lis.analysis.efficiency_tokens import INFRA_TERMINATIONS, episode_efficiency
from lis.config.analysis import ThroughputSection
from lis.errors import LisError
from lis.models.base import ChatModel
from lis.models.registry import build_model
from lis.models.server import ChatServer
from lis.runtime import episode_seed
from lis.sandbox import registry
from lis.sandbox.base import SandboxConfig
from lis.sandbox.pool import SandboxPool
from lis.tasks.schema import Task
from lis.util import cancel

log = logging.getLogger("lis.throughput")
SCHEMA = "lis.bench.throughput/1"
MODES = ("vanilla", "sandbox", "sandbox_inline")


def qpm(completed: int, wall_s: float) -> float:
    """Queries per minute: completed queries over the wall time in minutes (0 when nothing ran)."""
    return completed * 60.0 / wall_s if wall_s > 0 else 0.0


def run_summary(mode: str, repeat: int, position: int, episodes: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    """One run's numbers from its episodes (dicts with termination, wall_s and the token split)."""
    done = [e for e in episodes if e["termination"] not in INFRA_TERMINATIONS]
    errors = Counter(e["termination"] for e in episodes if e["termination"] in INFRA_TERMINATIONS)
    generated = sum(e["model_tokens"] or 0 for e in done)
    processed = sum(e["billed_tokens"] or 0 for e in done)
    usage_missing = sum(1 for e in done if e["model_tokens"] is None)
    return {
        "mode": mode, "repeat": repeat, "position": position, "queries": len(episodes), "completed": len(done),
        "errors": sum(errors.values()), "error_kinds": dict(errors),
        "terminations": dict(Counter(e["termination"] for e in episodes)),
        "wall_s": round(wall_s, 3), "qpm": round(qpm(len(done), wall_s), 4),
        "output_tokens_per_s": round(generated / wall_s, 3) if wall_s > 0 and not usage_missing else None,
        "tokens_per_s": round(processed / wall_s, 3) if wall_s > 0 and not usage_missing else None,
        "usage_missing": usage_missing,
        "episode_wall_s_mean": round(sum(e["wall_s"] for e in done) / len(done), 3) if done else None,
        "turns_mean": round(sum(e["turns"] for e in done) / len(done), 3) if done else None,
    }


def _mean_entry(values: list[float], digits: int = 3) -> dict[str, Any]:
    s = t_interval(values, floor=0.0)
    return {"mean": rounded(s["mean"], digits), "ci95": rounded(s["ci95"], digits), "n": s["n"],
            "values": rounded(values, digits)}


def summarize(runs: list[dict[str, Any]], modes: list[str], baseline: str = "vanilla") -> dict[str, Any]:
    """Per mode: QPM and tokens/s over repeats (mean, n, t-interval floored at 0); against the baseline:
    the geometric mean of the per-repeat QPM ratios (interval on the log scale) and the ratio of means."""
    out: dict[str, Any] = {"modes": {}, "ratios": {}}
    for m in modes:
        rs = sorted((r for r in runs if r["mode"] == m), key=lambda r: r["repeat"])
        tps = [r["tokens_per_s"] for r in rs if r["tokens_per_s"] is not None]
        ops = [r["output_tokens_per_s"] for r in rs if r["output_tokens_per_s"] is not None]
        out["modes"][m] = {"qpm": _mean_entry([r["qpm"] for r in rs]),
                           "output_tokens_per_s": _mean_entry(ops), "tokens_per_s": _mean_entry(tps),
                           "runs": len(rs), "queries": sum(r["queries"] for r in rs),
                           "completed": sum(r["completed"] for r in rs), "errors": sum(r["errors"] for r in rs)}
    if baseline in modes:
        base = {r["repeat"]: r["qpm"] for r in runs if r["mode"] == baseline}
        for m in modes:
            if m == baseline:
                continue
            pairs = [(r["qpm"], base[r["repeat"]]) for r in runs if r["mode"] == m and base.get(r["repeat"])]
            per = [a / b for a, b in pairs]
            g = geometric_interval(per)
            mean_m, mean_b = out["modes"][m]["qpm"]["mean"], out["modes"][baseline]["qpm"]["mean"]
            out["ratios"][f"{m}/{baseline}"] = {"geomean": rounded(g["mean"], 4), "ci95": rounded(g["ci95"], 4),
                                                "n": g["n"], "values": rounded(per, 4),
                                                "ratio_of_means": rounded(mean_m / mean_b, 4) if mean_b else None}
    return out


@contextlib.contextmanager
def model_endpoint(name: str, spec: dict[str, Any], serve: str) -> Iterator[tuple[ChatModel, dict[str, Any]]]:
    """The model both modes call: an ``openai`` entry's endpoint as it is; any other backend served by our
    ChatServer on loopback and called through the OpenAI client (``serve: http``, a vLLM endpoint's path)
    or called in-process (``serve: direct``)."""
    backend = spec.get("backend")
    if backend == "openai":
        yield build_model(name, spec), {"name": name, "backend": backend, "endpoint": spec.get("base_url"),
                                        "served_model": spec.get("model")}
        return
    inner = build_model(name, spec)
    if serve == "direct":
        yield inner, {"name": name, "backend": backend, "endpoint": "in-process"}
        return
    # lazy: loads the openai SDK (~1.5 s); importing this module does not
    from lis.models.openai_compat import OpenAIChatModel

    with ChatServer(inner) as srv:
        client = OpenAIChatModel(name, model=name, base_url=srv.base_url, api_key="EMPTY", timeout_s=3600,
                                 max_retries=1)
        yield client, {"name": name, "backend": backend, "endpoint": "ChatServer on loopback (OpenAI-compatible HTTP)"}


def _run_once(model: ChatModel, tasks: list[Task], mode: str, repeat: int, position: int, s: ThroughputSection,
              cfg_for: Callable[[str, str], AgentConfig], sandbox: SandboxConfig | None) -> dict[str, Any]:
    pool = None
    if mode != "vanilla":
        if sandbox is None:
            raise LisError(f"throughput mode {mode} needs a sandbox configuration", "check the sandbox params")
        pool = SandboxPool(sandbox, max_concurrent=s.concurrency, warm=s.warm)
        deadline = time.monotonic() + 120
        while s.warm and pool._ready.qsize() < min(s.warm, s.concurrency) and time.monotonic() < deadline:
            cancel.sleep(0.05)

    def one(task: Task) -> dict[str, Any]:
        cfg = cfg_for(task.domain, mode)
        if cfg.sampling.seed is None:
            cfg = dataclasses.replace(cfg, sampling=dataclasses.replace(
                cfg.sampling, seed=episode_seed(s.seed, task.id, repeat)))
        try:
            rec = run_task(task, model, mode, cfg, pool=pool, repeat=repeat, run_id=registry.RUN_ID)
        except Exception as ex:  # a harness failure on this item: an error, like the eval runner's
            return {"task_id": task.id, "termination": "error", "error": f"{type(ex).__name__}: {ex}"[:300],
                    "wall_s": 0.0, "turns": 0, "model_tokens": None, "billed_tokens": None, "end": time.monotonic()}
        e = episode_efficiency(rec)
        return {"task_id": task.id, "termination": rec.termination, "error": rec.error, "wall_s": rec.wall_s,
                "turns": e.turns, "model_tokens": e.tokens.model, "billed_tokens": e.tokens.billed_total,
                "end": time.monotonic()}

    executor = ThreadPoolExecutor(max_workers=s.concurrency, thread_name_prefix="lis-throughput")
    t0 = time.monotonic()
    futures: set[Future] = {executor.submit(one, t) for t in tasks}
    episodes: list[dict[str, Any]] = []
    try:
        pending = futures
        while pending:
            finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            episodes += [f.result() for f in finished]
    except BaseException:  # Ctrl-C (or a harness bug): start nothing new, remove our sandboxes, unwind
        cancel.request()
        executor.shutdown(wait=False, cancel_futures=True)
        registry.close_all()
        raise
    finally:
        if pool is not None:
            pool.close()
    executor.shutdown(wait=True)
    if cancel.requested() or any(e["termination"] == "interrupted" for e in episodes):
        raise KeyboardInterrupt  # cancelled (SIGTERM, or an episode's own cancellation): no number from a partial run
    wall = max(e["end"] for e in episodes) - t0
    run = run_summary(mode, repeat, position, episodes, wall)
    if run["errors"] > s.max_error_share * run["queries"]:
        first = next((e["error"] for e in episodes if e["termination"] in INFRA_TERMINATIONS and e["error"]), None)
        raise LisError(f"throughput {mode} repeat {repeat}: {run['errors']} of {run['queries']} episodes are "
                       f"infrastructure errors ({', '.join(f'{k} {v}' for k, v in run['error_kinds'].items())}); "
                       f"no QPM published" + (f"; e.g. {first[:200]}" if first else ""),
                       "check the model endpoint and the sandbox (lis doctor), then run again")
    return run


def run_throughput(model: ChatModel, tasks: list[Task], s: ThroughputSection,
                   cfg_for: Callable[[str, str], AgentConfig], sandbox: SandboxConfig | None,
                   progress: Callable[[str], None] = lambda msg: None) -> dict[str, Any]:
    """Untimed warm-up episodes, then every (repeat, mode) run in alternating mode order, and their summary."""
    warmup = []
    if s.warmup:
        for mode in s.modes:
            progress(f"warm-up: {mode} ({min(s.warmup, len(tasks))} untimed episode(s))")
            w = _run_once(model, tasks[:s.warmup], mode, -1, 0, s, cfg_for, sandbox)
            warmup.append({k: w[k] for k in ("mode", "queries", "completed", "errors", "wall_s")})
    runs = []
    for r in range(s.repeats):
        order = s.modes if r % 2 == 0 else list(reversed(s.modes))
        for pos, mode in enumerate(order):
            progress(f"repeat {r + 1}/{s.repeats}: {mode} ({len(tasks)} tasks, concurrency {s.concurrency})")
            run = _run_once(model, tasks, mode, r, pos, s, cfg_for, sandbox)
            log.info("repeat %d %s: %d/%d completed in %.1fs, %.2f QPM", r, mode, run["completed"], run["queries"],
                     run["wall_s"], run["qpm"])
            runs.append(run)
    return {
        "schema": SCHEMA,
        "definitions": "docs/efficiency.md#throughput",
        "settings": s.model_dump(),
        "tasks": [{"id": t.id, "domain": t.domain} for t in tasks],
        "sandbox": None if sandbox is None else {"backend": sandbox.backend, "image": sandbox.image or sandbox.rootfs,
                                                 "limits": dataclasses.asdict(sandbox.limits)},
        "host": {"cpus": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version()},
        "warmup": warmup,
        "runs": runs,
        "summary": summarize(runs, s.modes),
    }

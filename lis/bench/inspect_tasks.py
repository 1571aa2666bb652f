"""``lis bench inspect-tasks``: the lis Inspect tasks' own cost, against lis's loop run directly.

For each task and mode, N samples run two ways in one process with the same scripted policy and
sandboxes: ``inspect`` (``inspect_ai.eval`` with ``mockllm/model``: task building, Inspect's sample
loop, the ``lis`` provider, solver, scorer, log) and ``lis`` (:func:`lis.agent.episode.run_task`
on a :class:`SandboxPool`, scored by :func:`lis.rewards.score`). Printed: both wall times and their
ratio, after an uncounted warm-up of each mode.
"""
from __future__ import annotations

import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from lis.agent.episode import run_task
from lis.inspect.settings import load_params
from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.rewards import score
from lis.runtime import agent_config, sandbox_config
from lis.sandbox.pool import SandboxPool

COMMAND = "ls /testbed/documents 2>/dev/null | head -5; printf '%s' '\\boxed{0}' > /testbed/answer.txt"
ANSWER = "\\boxed{0}"


def policy(messages, tools, tool_choice, config):
    """mockllm/model's custom outputs: the scripted policy (see the module doc)."""
    from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage

    done = sum(isinstance(m, ChatMessageTool) for m in messages)
    if not tools:
        out = ModelOutput.from_content("mockllm/model", ANSWER)
    elif done == 0:
        out = ModelOutput.for_tool_call("mockllm/model", "execute_bash", {"command": COMMAND})
    else:
        out = ModelOutput.for_tool_call("mockllm/model", "submit", {})
    out.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)  # no tiktoken (offline)
    return out


def _scripted(mode: str):
    if mode == "vanilla":
        return ScriptedModel([ANSWER])
    return ScriptedModel([assistant(None, tool_call("execute_bash", {"command": COMMAND}, "b0")),
                          assistant(None, tool_call("submit", {}, "b1"))])


def _inspect(name: str, mode: str, samples: int, profile: str | None, tasks_file: str | None, log_dir: str) -> dict:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    args: dict[str, Any] = {"mode": mode, "profile": profile, "limit": samples}
    if tasks_file:
        args["tasks_file"] = tasks_file
    t0 = time.perf_counter()
    (log,) = inspect_eval(f"lis/{name}", model=get_model("mockllm/model", custom_outputs=policy, memoize=False),
                          task_args=args, limit=samples, log_dir=log_dir, display="none")
    wall = time.perf_counter() - t0
    if log.status != "success":
        raise RuntimeError(f"lis/{name} ({mode}) ended {log.status}: {log.error}")
    return {"wall_s": round(wall, 3), "samples": len(log.samples or [])}


def _lis(tasks: list, mode: str, params) -> dict:
    def one(task):
        rec = run_task(task, _scripted(mode), mode, agent_config(params, domain=task.domain, sandbox=box), pool=pool)
        score(task, rec.answer, mode=mode, ifbench_variant=params.settings("scoring").ifbench_variants)
        return rec

    pool = None
    box = None
    if mode != "vanilla":
        box = sandbox_config(params, run_id="bench-inspect-tasks")
        pool = SandboxPool(box, max_concurrent=min(len(tasks), params.settings("sandbox").pool.max_concurrent))
    t0 = time.perf_counter()
    try:
        with ThreadPoolExecutor(max_workers=len(tasks)) as ex:
            recs = list(ex.map(one, tasks))
    finally:
        if pool is not None:
            pool.close()
    bad = [r.termination for r in recs if r.termination not in ("submitted", "answered")]
    if bad:
        raise RuntimeError(f"lis episodes ended {bad}")
    return {"wall_s": round(time.perf_counter() - t0, 3), "samples": len(recs)}


def run(names: list[str], modes: list[str], samples: int, profile: str | None, tasks_files: dict[str, str],
        progress: Callable[[str], None] = lambda _: None) -> dict:
    """Both ways for every task and mode (a mode a task has not is skipped); see the module doc."""
    # lazy: optional dependency (inspect-ai, the `inspect` extra)
    from lis.inspect.dataset import load_task_set
    # lazy: optional dependency (inspect-ai, the `inspect` extra)
    from lis.inspect.tasks import DOMAINS, INLINE_DOMAINS

    params = load_params(None, profile)
    rows: list[dict] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lis-bench-inspect-") as tmp:
        progress("warm-up")
        for mode in modes:
            _inspect("math", mode, 1, profile, None, str(Path(tmp) / f"warmup-{mode}"))
        for name in names:
            domain = DOMAINS[name]
            try:
                tasks = load_task_set(params, domain, tasks_file=tasks_files.get(name), limit=samples)
            except Exception as e:  # noqa: BLE001 - e.g. chemistry has no offline sample
                skipped.append(f"{name}: {' '.join(str(e).split())[:200]}")
                continue
            for mode in modes:
                if mode == "sandbox_inline" and domain not in INLINE_DOMAINS:
                    continue
                progress(f"{name} {mode}")
                ins = _inspect(name, mode, samples, profile, tasks_files.get(name), str(Path(tmp) / f"{name}-{mode}"))
                base = _lis(tasks, mode, params)
                rows.append({"task": f"lis/{name}", "mode": mode, "samples": ins["samples"],
                             "inspect_wall_s": ins["wall_s"], "lis_wall_s": base["wall_s"],
                             "inspect_over_lis": round(ins["wall_s"] / base["wall_s"], 2) if base["wall_s"] else None})
    return {"profile": params.profile, "backend": params.settings("sandbox").backend, "samples": samples,
            "rows": rows, "skipped": skipped}

"""One task, end to end: prompts, a sandbox with the task's files, the loop, the answer.

``mode`` is ``sandbox`` (documents as files), ``sandbox_inline`` (documents in the prompt, the
paper's Table 3 ablation) or ``vanilla`` (one direct answer, no tools). Scoring is not done
here: graders run on the host over the finished record (lis.rewards).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import shlex
import time
from pathlib import Path
from typing import Any, Callable

from lis.agent.loop import AgentConfig, run_episode, stopper
from lis.agent.trajectory import Step, Trajectory
from lis.agent.turn import ending
from lis.models.base import ChatModel, ModelError
from lis.util.text import safe_result
from lis.prompts import layout, render_prompts
from lis.sandbox.base import Sandbox, SandboxError
from lis.sandbox.pool import SandboxPool
from lis.tasks.schema import Task
from lis.util import cancel, deadline as deadlines


def _record(task: Task, model: ChatModel, mode: str, **meta: Any) -> Trajectory:
    known = {f.name for f in dataclasses.fields(Trajectory)}
    return Trajectory(task_id=task.id, model=model.name, mode=mode, domain=task.domain,
                      started_utc=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                      **{k: v for k, v in meta.items() if k in known})


def run_vanilla(task: Task, model: ChatModel, cfg: AgentConfig, **meta: Any) -> Trajectory:
    """The model answers directly; the answer is the whole response (as the paper scores it)."""
    rec = _record(task, model, "vanilla", **meta)
    messages = render_prompts(task, "vanilla")
    t0 = time.monotonic()
    try:
        cancel.check()
        with deadlines.scope(until=t0 + cfg.episode_timeout_s):  # the answer cannot take longer than the episode
            res = model.chat(messages, None, cfg.sampling)
    except (ModelError, cancel.Interrupted) as e:
        if isinstance(e, cancel.Interrupted) or cancel.requested():
            rec.termination = "interrupted"
        else:
            rec.termination = ending(e)
            rec.error = e.one_line()
        rec.messages = messages
        rec.wall_s = time.monotonic() - t0
        return rec
    res = safe_result(res)  # invalid Unicode from the model: replaced and counted (lis.util.text)
    msg = {**res.message, "role": "assistant"}
    rec.steps.append(Step(index=0, content=msg.get("content"), reasoning=msg.get("reasoning_content"), calls=[],
                          llm_latency_s=res.latency_s, prompt_tokens=res.usage.prompt_tokens,
                          completion_tokens=res.usage.completion_tokens, cached_tokens=res.usage.cached_tokens,
                          finish_reason=res.finish_reason, invalid_text=res.invalid_text,
                          completion_ids=res.completion_ids if cfg.keep_token_ids else None,
                          logprobs=res.logprobs if cfg.keep_token_ids else None, reply_cut=res.reply_cut))
    rec.messages = messages + [msg]
    rec.answer = (msg.get("content") or "").strip()
    rec.termination = "truncated" if res.finish_reason == "length" else "answered"
    rec.totals()
    rec.wall_s = time.monotonic() - t0
    return rec


def prepare_sandbox(sb: Sandbox, task: Task, mode: str, input_dir: Path | None = None) -> Any:
    """Create the task's folders and put its files in place; return the layout."""
    lay = layout(task, mode)
    dirs = {lay.working_dir, lay.output_dir, lay.input_dir}
    r = sb.exec("mkdir -p " + " ".join(shlex.quote(d) for d in sorted(dirs)), timeout=30)
    if r.exit_code != 0:
        raise SandboxError(f"cannot create the task folders: {r.stderr.strip()[:200]}")
    if lay.place_files:
        sb.put_files(task.input_files, lay.input_dir)
    if input_dir is not None:
        sb.copy_in(input_dir, lay.input_dir)
    return lay


def acquire_timed(pool: SandboxPool) -> tuple[Sandbox, float]:
    """(a sandbox of ``pool``, the seconds waited for it): for a pool slot and the host's start
    admission, without the start itself (a warm sandbox: the whole time it took to hand it out)."""
    asked = time.monotonic()
    sb = pool.acquire()
    took = time.monotonic() - asked
    cold = getattr(sb, "started_at", 0.0) >= asked  # started for this episode, not taken warm
    return sb, (max(0.0, took - sb.started_s) if cold else took)


def run_task(task: Task, model: ChatModel, mode: str, cfg: AgentConfig, *, pool: SandboxPool | None = None,
             sandbox: Sandbox | None = None, input_dir: Path | None = None, collect_to: Path | None = None,
             on_step: Callable[[Step], None] | None = None, should_stop: Callable[[], bool] | None = None,
             **meta: Any) -> Trajectory:
    """Run ``task`` in ``mode``. Sandbox modes take a sandbox from ``pool`` (or use ``sandbox``), place
    the task's files, run the loop, copy the output folder to ``collect_to`` (unless interrupted) and
    give the sandbox back. Never raises for model or sandbox failures: the record's ``termination``
    and ``error`` say what happened (``should_stop``: :func:`lis.agent.loop.run_episode`)."""
    stopped = stopper(should_stop)
    if mode == "vanilla":
        return run_vanilla(task, model, cfg, **meta)
    rec = _record(task, model, mode, **meta)
    lay = layout(task, mode)
    messages = render_prompts(task, mode)
    cfg = dataclasses.replace(cfg, answer_path=lay.answer_path)
    t0 = time.monotonic()
    sb = sandbox
    try:
        if sb is None:
            if pool is None:
                raise ValueError("run_task needs a pool or a sandbox in sandbox modes")
            sb, rec.acquire_wait_s = acquire_timed(pool)
        rec.sandbox_start_s = getattr(sb, "started_s", 0.0)
        rec.backend = sb.config.backend
        rec.image = sb.config.image or sb.config.rootfs
        if stopped():
            raise cancel.Interrupted("cancelled")
        prepare_sandbox(sb, task, mode, input_dir)
        run_episode(model, sb, messages, cfg, rec, on_step=on_step, should_stop=should_stop)
        if collect_to is not None and not stopped():
            try:
                sb.copy_out(lay.output_dir, collect_to, first=(lay.answer_path,))  # the answer first, capped
            except (OSError, SandboxError) as e:
                rec.error = rec.error or f"could not copy {lay.output_dir} out: {e}"
    except SandboxError as e:
        rec.termination = "interrupted" if stopped() else "sandbox_error"
        rec.error = e.one_line()
        rec.messages = rec.messages or messages
    except cancel.Interrupted:
        rec.termination = "interrupted"
        rec.messages = rec.messages or messages
    finally:
        if sb is not None and sandbox is None and pool is not None:
            pool.release(sb)
    rec.wall_s = time.monotonic() - t0
    return rec

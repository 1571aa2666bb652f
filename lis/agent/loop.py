"""The episode loop: the model works in the sandbox through the three tools until it submits.

Faithful to llm-in-sandbox 0.2 where the paper defines the method: the tools and their order,
"Steps Remaining: N" after the newest message, a reminder (CONTINUE) when a turn has no tool
call, 100 turns, 120 s per command, the answer read from the answer file after the episode
whether or not the model submitted. Better: every tool call of a turn runs (theirs runs the
first and answers it alone), malformed calls get error observations, tool calls written as
``<tool_call>`` text are understood, the conversation token budget and an episode wall-clock
timeout really end the episode, and every turn records tokens and timings.
"""
from __future__ import annotations

import copy
import datetime as dt
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from lis.agent.parsing import INVALID, parse_text_tool_calls
from lis.agent.tools.dispatch import ToolOutcome, ToolSettings, execute_tool_call
from lis.agent.tools.schemas import TOOLS
from lis.agent.trajectory import Step, ToolCallRecord, Trajectory
from lis.models.base import ChatModel, ContextLengthError, ModelError, ModelTimeout, Sampling
from lis.util.text import safe_message, safe_result
from lis.sandbox.base import Sandbox, SandboxError
from lis.util import cancel, deadline as deadlines

log = logging.getLogger(__name__)

CONTINUE_MSG = ("Your last response did not call a function. You must use a function call in every response: "
                "execute_bash to run commands, str_replace_editor to view and edit files, submit when the answer "
                "file is written. Do not ask for human help; work on the task yourself.")


@dataclass
class AgentConfig:
    max_turns: int = 100                     # the paper's max_steps
    max_context_tokens: int = 65536          # the conversation may not grow past this (paper: max_token_limit)
    episode_timeout_s: float = 5400.0        # wall clock for the whole episode (the RL recipe's trajectory_timeout)
    answer_path: str = "/testbed/answer.txt"
    answer_max_bytes: int = 1 << 20
    steps_remaining: bool = True
    tools: ToolSettings = field(default_factory=ToolSettings)
    sampling: Sampling = field(default_factory=Sampling)
    keep_token_ids: bool = False             # keep sampled ids and logprobs per turn (RL)


def _tokens_estimate(messages: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(m, ensure_ascii=False)) for m in messages) // 4


def _append_remaining(msg: dict[str, Any], n: int) -> None:
    msg["content"] = f"{msg.get('content') or ''}\nSteps Remaining: {n}"


def first_call_messages(messages: list[dict[str, Any]], cfg: AgentConfig) -> list[dict[str, Any]]:
    """The conversation the model is given on an episode's first turn (the prompt messages with the
    "Steps Remaining" line :func:`run_episode` adds): what a prompt budget must be checked against."""
    history = copy.deepcopy(messages)
    if cfg.steps_remaining and cfg.max_turns > 0:
        _append_remaining(history[-1], cfg.max_turns)
    return history


def ending(e: ModelError) -> str:
    """How a failed model call ends the episode: over its time (the model call's deadline, the
    episode's), over its context, or a model error (the server failed)."""
    if isinstance(e, ModelTimeout):
        return "timeout"
    return "token_budget" if isinstance(e, ContextLengthError) else "model_error"


def stopper(should_stop: Callable[[], bool] | None) -> Callable[[], bool]:
    """True once the whole run is cancelled (Ctrl-C, :mod:`lis.util.cancel`) or ``should_stop()``
    says so (one episode's own cancellation, e.g. its client went away)."""
    return lambda: cancel.requested() or bool(should_stop and should_stop())


def _check(stopped: Callable[[], bool]) -> None:
    cancel.check()
    if stopped():
        raise cancel.Interrupted("cancelled")


def run_episode(model: ChatModel, sandbox: Sandbox, messages: list[dict[str, Any]], cfg: AgentConfig,
                record: Trajectory, on_step: Callable[[Step], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> Trajectory:
    """Run one episode on a started sandbox whose input files are in place; fill and return ``record``.

    Never raises for what the model or the commands do: the record's ``termination`` says how
    the episode ended (submitted, max_turns, token_budget, timeout, model_error, sandbox_error,
    or interrupted: cancelled by Ctrl-C, see :mod:`lis.util.cancel`, or by ``should_stop``).
    ``should_stop`` (optional) is this episode's own cancellation token, checked wherever the
    global cancellation is: before every model and tool call, and when a call fails (a sandbox
    killed from outside because its episode was cancelled ends it as interrupted, not as an error).
    """
    stopped = stopper(should_stop)
    t0 = time.monotonic()
    deadline = t0 + cfg.episode_timeout_s
    record.started_utc = record.started_utc or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    history = copy.deepcopy(messages)
    last_prompt = last_completion = 0
    since_usage: list[dict[str, Any]] = []  # messages added after the last usage report
    termination = ""
    for k in range(cfg.max_turns):
        if time.monotonic() >= deadline:
            termination = "timeout"
            break
        if cfg.steps_remaining:
            _append_remaining(history[-1], cfg.max_turns - k)
        est = last_prompt + last_completion + _tokens_estimate(since_usage) if last_prompt else _tokens_estimate(history)
        if est > cfg.max_context_tokens:
            termination = "token_budget"
            break
        try:
            _check(stopped)
            with deadlines.scope(until=deadline, stopped=stopped):  # the call cannot outlive the episode
                res = model.chat(history, TOOLS, cfg.sampling)
        except cancel.Interrupted:
            termination = "interrupted"
            break
        except ModelError as e:
            if stopped():
                termination = "interrupted"
                break
            termination = ending(e)
            record.error = e.one_line()
            break
        res = safe_result(res)  # invalid Unicode from the model: replaced and counted (lis.util.text)
        msg = dict(res.message)
        msg["role"] = "assistant"
        last_prompt, last_completion = res.usage.prompt_tokens or 0, res.usage.completion_tokens or 0
        calls = list(msg.get("tool_calls") or [])
        text_calls = False
        invalid = res.invalid_text
        if not calls:
            calls, rest = parse_text_tool_calls(msg.get("content"), salt=(record.task_id, k))
            if calls:
                text_calls = True
                msg["content"] = rest or None
                msg["tool_calls"] = calls
                msg, escaped = safe_message(msg)  # JSON in the text may escape invalid text ("\\udcff")
                calls, invalid = msg.get("tool_calls") or [], invalid + escaped
        step = Step(index=k, content=msg.get("content"), reasoning=msg.get("reasoning_content"), calls=[],
                    llm_latency_s=res.latency_s, prompt_tokens=res.usage.prompt_tokens,
                    completion_tokens=res.usage.completion_tokens, cached_tokens=res.usage.cached_tokens,
                    finish_reason=res.finish_reason, text_tool_calls=text_calls, invalid_text=invalid,
                    completion_ids=res.completion_ids if cfg.keep_token_ids else None,
                    logprobs=res.logprobs if cfg.keep_token_ids else None, reply_cut=res.reply_cut)
        history.append({k2: v for k2, v in msg.items() if v is not None or k2 == "content"})
        since_usage = []
        if not calls:
            nudge = {"role": "user", "content": CONTINUE_MSG}
            history.append(nudge)
            since_usage.append(nudge)
        done = False
        try:
            for call in calls:
                _check(stopped)
                fn = call.get("function", {})
                name, raw = fn.get("name"), fn.get("arguments")
                if name == INVALID:
                    out = ToolOutcome(f"Error: your tool call could not be parsed ({raw}). Write it as "
                                      '<tool_call>{"name": ..., "arguments": {...}}</tool_call> with valid JSON.',
                                      None, None, error="bad_json")
                else:
                    settings = cfg.tools
                    left = deadline - time.monotonic()
                    if left < settings.command_timeout_s:
                        settings = ToolSettings(**{**settings.__dict__, "command_timeout_s": max(1.0, left)})
                    out = execute_tool_call(sandbox, name, raw, settings)
                step.calls.append(ToolCallRecord(
                    id=call.get("id", ""), tool=out.tool, arguments=out.arguments,
                    raw_arguments=raw if out.arguments is None and isinstance(raw, str) else None,
                    observation=out.observation, exit_code=out.exit_code, exec_time_s=out.exec_time_s,
                    error=out.error, timed_out=out.timed_out, observation_chars=len(out.observation)))
                tool_msg = {"role": "tool", "tool_call_id": call.get("id", ""), "name": name or "",
                            "content": out.observation}
                history.append(tool_msg)
                since_usage.append(tool_msg)
                if out.done:
                    done = True
                    break
        except cancel.Interrupted:
            record.steps.append(step)
            termination = "interrupted"
            break
        except SandboxError as e:
            _record_fatal_call(step, calls, e)
            record.steps.append(step)
            termination = "interrupted" if stopped() else "sandbox_error"
            record.error = e.one_line()
            break
        record.steps.append(step)
        if on_step:
            on_step(step)
        if done:
            termination = "submitted"
            break
    else:
        termination = "max_turns"
    record.messages = history
    record.termination = termination
    record.answer = read_answer(sandbox, cfg)
    record.totals()
    record.wall_s = time.monotonic() - t0
    return record


def _record_fatal_call(step: Step, calls: list[dict[str, Any]], error: SandboxError) -> None:
    """The call during which the sandbox went away (out of memory, killed) goes into the step too,
    with the error as its observation: the record shows what did it."""
    if len(step.calls) >= len(calls):
        return
    call = calls[len(step.calls)]
    fn = call.get("function") or {}
    raw = fn.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = None
    args = args if isinstance(args, dict) else None
    text = f"Error: {error.one_line()}"
    step.calls.append(ToolCallRecord(id=call.get("id", ""), tool=fn.get("name"), arguments=args,
                                     raw_arguments=raw if args is None and isinstance(raw, str) else None,
                                     observation=text, exit_code=None, exec_time_s=0.0, error="sandbox_error",
                                     observation_chars=len(text)))


def read_answer(sandbox: Sandbox, cfg: AgentConfig) -> str:
    """The answer file's text, stripped; "" when it is missing or the sandbox is gone."""
    try:
        return sandbox.read_file(cfg.answer_path, max_bytes=cfg.answer_max_bytes).decode("utf-8", "replace").strip()
    except (OSError, SandboxError):
        return ""

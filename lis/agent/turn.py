"""One turn of the episode loop (:mod:`lis.agent.loop`), in steps: ask the model (:func:`ask`), read
the tool calls of its reply (:func:`read_reply`), run them (:func:`run_calls`). A step that ends the
episode raises :class:`EpisodeEnd` with the termination reason."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from lis.agent.parsing import INVALID, parse_text_tool_calls
from lis.agent.tools.dispatch import ToolOutcome, ToolSettings, execute_tool_call
from lis.agent.tools.schemas import TOOLS
from lis.agent.trajectory import Step, ToolCallRecord
from lis.models.base import ChatModel, ChatResult, ContextLengthError, ModelError, ModelTimeout, Sampling, Usage
from lis.sandbox.base import Sandbox, SandboxError
from lis.util import cancel, deadline as deadlines
from lis.util.text import safe_message, safe_result


class EpisodeEnd(Exception):
    """The episode ends: ``reason`` becomes the record's termination, ``error`` (when set) its error,
    and ``step`` (when set) is the ending turn's step, to be recorded with the calls it made."""

    def __init__(self, reason: str, error: str | None = None, step: Step | None = None):
        super().__init__(reason)
        self.reason, self.error, self.step = reason, error, step


def tokens_estimate(messages: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(m, ensure_ascii=False)) for m in messages) // 4


def append_remaining(msg: dict[str, Any], n: int) -> None:
    msg["content"] = f"{msg.get('content') or ''}\nSteps Remaining: {n}"


@dataclass
class Conversation:
    """The messages the model is sent, and its size in tokens: the last reply's prompt and completion
    tokens plus an estimate of the messages added since, or an estimate of all before the first reply."""

    history: list[dict[str, Any]]
    last_prompt: int = 0
    last_completion: int = 0
    since_usage: list[dict[str, Any]] = field(default_factory=list)  # messages added after the last usage report

    def tokens(self) -> int:
        if self.last_prompt:
            return self.last_prompt + self.last_completion + tokens_estimate(self.since_usage)
        return tokens_estimate(self.history)

    def reply(self, msg: dict[str, Any], usage: Usage) -> None:
        """The model's message, with the usage it reported."""
        self.last_prompt, self.last_completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
        self.history.append({k: v for k, v in msg.items() if v is not None or k == "content"})
        self.since_usage = []

    def add(self, msg: dict[str, Any]) -> None:
        """A message after the model's (a tool's observation, a reminder)."""
        self.history.append(msg)
        self.since_usage.append(msg)


def ending(e: ModelError) -> str:
    """How a failed model call ends the episode: ``model_timeout`` when the episode's time ran out
    inside the call (the server gave no complete answer before the deadline: an infrastructure error,
    never a score), ``token_budget`` over its context, else ``model_error`` (the server failed)."""
    if isinstance(e, ModelTimeout):
        return "model_timeout"
    return "token_budget" if isinstance(e, ContextLengthError) else "model_error"


def _check(stopped: Callable[[], bool]) -> None:
    cancel.check()
    if stopped():
        raise cancel.Interrupted("cancelled")


def ask(model: ChatModel, history: list[dict[str, Any]], sampling: Sampling, deadline: float,
        stopped: Callable[[], bool]) -> ChatResult:
    """The model's reply, its invalid Unicode replaced and counted (:mod:`lis.util.text`). Ends the
    episode when it is cancelled or the call fails (:func:`ending`, interrupted once cancelled)."""
    try:
        _check(stopped)
        with deadlines.scope(until=deadline, stopped=stopped):  # the call cannot outlive the episode
            res = model.chat(history, TOOLS, sampling)
    except cancel.Interrupted:
        raise EpisodeEnd("interrupted") from None
    except ModelError as e:
        if stopped():
            raise EpisodeEnd("interrupted") from None
        raise EpisodeEnd(ending(e), e.one_line()) from e
    return safe_result(res)


def read_reply(res: ChatResult, index: int, salt: Any,
               keep_token_ids: bool) -> tuple[dict[str, Any], list[dict[str, Any]], Step]:
    """The assistant message, its tool calls (those written as ``<tool_call>`` text moved into it,
    their ids derived from ``salt``) and the turn's step, its calls still to run."""
    msg = dict(res.message)
    msg["role"] = "assistant"
    calls = list(msg.get("tool_calls") or [])
    text_calls = False
    invalid = res.invalid_text
    if not calls:
        calls, rest = parse_text_tool_calls(msg.get("content"), salt=salt)
        if calls:
            text_calls = True
            msg["content"] = rest or None
            msg["tool_calls"] = calls
            msg, escaped = safe_message(msg)  # JSON in the text may escape invalid text ("\\udcff")
            calls, invalid = msg.get("tool_calls") or [], invalid + escaped
    step = Step(index=index, content=msg.get("content"), reasoning=msg.get("reasoning_content"), calls=[],
                llm_latency_s=res.latency_s, prompt_tokens=res.usage.prompt_tokens,
                completion_tokens=res.usage.completion_tokens, cached_tokens=res.usage.cached_tokens,
                finish_reason=res.finish_reason, text_tool_calls=text_calls, invalid_text=invalid,
                completion_ids=res.completion_ids if keep_token_ids else None,
                logprobs=res.logprobs if keep_token_ids else None, reply_cut=res.reply_cut)
    return msg, calls, step


def run_calls(sandbox: Sandbox, calls: list[dict[str, Any]], step: Step, talk: Conversation, tools: ToolSettings,
              deadline: float, stopped: Callable[[], bool]) -> bool:
    """Run the turn's calls in order into ``step`` and the conversation; True once one submits.
    Ends the episode, ``step`` with it, when it is cancelled or the sandbox fails."""
    try:
        for call in calls:
            _check(stopped)
            fn = call.get("function", {})
            name, raw = fn.get("name"), fn.get("arguments")
            out = _run_call(sandbox, name, raw, tools, deadline)
            step.calls.append(ToolCallRecord(
                id=call.get("id", ""), tool=out.tool, arguments=out.arguments,
                raw_arguments=raw if out.arguments is None and isinstance(raw, str) else None,
                observation=out.observation, exit_code=out.exit_code, exec_time_s=out.exec_time_s,
                error=out.error, timed_out=out.timed_out, observation_chars=len(out.observation)))
            talk.add({"role": "tool", "tool_call_id": call.get("id", ""), "name": name or "",
                      "content": out.observation})
            if out.done:
                return True
    except cancel.Interrupted:
        raise EpisodeEnd("interrupted", step=step) from None
    except SandboxError as e:
        _record_fatal_call(step, calls, e)
        raise EpisodeEnd("interrupted" if stopped() else "sandbox_error", e.one_line(), step) from e
    return False


def _run_call(sandbox: Sandbox, name: Any, raw: Any, tools: ToolSettings, deadline: float) -> ToolOutcome:
    """One call's outcome; a command may not run past the episode's deadline."""
    if name == INVALID:
        return ToolOutcome(f"Error: your tool call could not be parsed ({raw}). Write it as "
                           '<tool_call>{"name": ..., "arguments": {...}}</tool_call> with valid JSON.',
                           None, None, error="bad_json")
    left = deadline - time.monotonic()
    if left < tools.command_timeout_s:
        tools = ToolSettings(**{**tools.__dict__, "command_timeout_s": max(1.0, left)})
    return execute_tool_call(sandbox, name, raw, tools)


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

"""lis's episode steps as Inspect transcript events: what Inspect View shows turn by turn (lis's loop
runs the tools itself, not through Inspect's tool machinery).
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from inspect_ai.event import ModelEvent, ToolEvent
from inspect_ai.model import ChatMessageAssistant, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolCallError

from lis.agent.tools.schemas import TOOLS
from lis.agent.trajectory import Step, ToolCallRecord
from lis.inspect.messages import to_inspect, tool_info, usage_to_inspect

ERROR_TYPES = {"bad_json": "parsing", "sandbox_error": "sandbox_unavailable"}


def _stamp(when: dt.datetime | None) -> dict[str, Any]:
    return {"timestamp": when} if when is not None else {}


def tool_event(call: ToolCallRecord, when: dt.datetime | None = None) -> ToolEvent:
    """One tool call of a step, with its observation as the result."""
    kind = "timeout" if call.timed_out else ERROR_TYPES.get(call.error or "")
    error = ToolCallError(kind, call.observation[:2000]) if kind else None  # type: ignore[arg-type]
    args = call.arguments if isinstance(call.arguments, dict) else {"raw_arguments": call.raw_arguments or ""}
    return ToolEvent(id=call.id, function=call.tool or "", arguments=args, result=call.observation, error=error,
                     working_time=call.exec_time_s, completed=when, **_stamp(when))


def tool_events(step: Step, when: dt.datetime | None = None) -> list[ToolEvent]:
    return [tool_event(c, when) for c in step.calls]


def model_event(model: str, history: list[dict[str, Any]], step: Step, *, vanilla: bool,
                when: dt.datetime | None = None) -> ModelEvent:
    """The model call of ``step``: ``history`` is the conversation it was given (lis's messages up
    to the step's assistant message), the output is that message with the step's usage."""
    assistant = to_inspect([history[-1]], model=model)[0] if history and history[-1].get("role") == "assistant" else None
    given = history[:-1] if assistant is not None else history
    message = assistant if isinstance(assistant, ChatMessageAssistant) else ChatMessageAssistant(content=step.content or "")
    out = ModelOutput.from_message(message, stop_reason="tool_calls" if message.tool_calls else "stop")
    out.model = model
    out.usage = usage_to_inspect(step.prompt_tokens, step.completion_tokens, step.cached_tokens)
    out.time = step.llm_latency_s
    return ModelEvent(model=model, input=to_inspect(given, model=model),
                      tools=[] if vanilla else [tool_info(t) for t in TOOLS], tool_choice="auto" if not vanilla else "none",
                      config=GenerateConfig(), output=out, working_time=step.llm_latency_s, completed=when,
                      **_stamp(when))

"""lis's records in Inspect's terms and back: chat messages, tool schemas, token usage.

lis keeps a conversation as OpenAI chat dicts (``lis.models.base``), Inspect as ``ChatMessage``
objects whose tool calls carry parsed arguments. Both directions are exact for everything lis
writes; arguments that are not a JSON object travel as Inspect's ``parse_error``
(:func:`call_from_inspect`).
"""
from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import (ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageTool,
                              ChatMessageUser, ContentReasoning, ContentText, ModelUsage)
from inspect_ai.tool import ToolCall, ToolInfo

from lis.models.base import Usage

# Arguments Inspect could not parse travel to lis's dispatcher as this text (never valid JSON), so
# that the model is told its call was malformed, as lis tells it (lis.agent.tools.dispatch).
UNPARSED = "<arguments Inspect could not parse: {error}>"


def tool_info(schema: dict[str, Any]) -> ToolInfo:
    """An OpenAI function schema (lis.agent.tools.schemas) as Inspect's ``ToolInfo``: the same
    name, description and parameters, so the model sees the paper's tools, not Inspect's ``bash()``."""
    fn = schema["function"]
    return ToolInfo.model_validate({"name": fn["name"], "description": fn["description"],
                                    "parameters": fn.get("parameters") or {"type": "object", "properties": {}}})


def _text(content: Any) -> str | None:
    """Inspect content (a string or a list of parts) as lis's plain text; reasoning parts left out."""
    if content is None or isinstance(content, str):
        return content
    parts = [p.text for p in content if isinstance(p, ContentText)]
    return "".join(parts) if parts else None


def _reasoning(content: Any) -> str | None:
    if isinstance(content, list):
        parts = [p.reasoning for p in content if isinstance(p, ContentReasoning) and not p.redacted]
        return "\n".join(parts) if parts else None
    return None


def call_from_inspect(call: ToolCall) -> dict[str, Any]:
    """One Inspect tool call as an OpenAI tool call. Arguments Inspect could not parse become
    :data:`UNPARSED` (not JSON), which lis's dispatcher answers with its error observation."""
    if call.parse_error:
        args = UNPARSED.format(error=" ".join(call.parse_error.split())[:500])
    else:
        args = json.dumps(call.arguments, ensure_ascii=False)
    return {"id": call.id, "type": "function", "function": {"name": call.function, "arguments": args}}


def call_to_inspect(call: dict[str, Any]) -> ToolCall:
    """One OpenAI tool call as Inspect's ``ToolCall`` (arguments parsed; a text that is not a JSON
    object is kept as the parse error, with the text in it)."""
    fn = call.get("function") or {}
    raw = fn.get("arguments")
    args: Any = raw
    error = None
    if isinstance(raw, str):
        try:
            args = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):
            args, error = {}, f"the arguments are not valid JSON: {raw[:2000]}"
    if not isinstance(args, dict):
        args, error = {}, error or f"the arguments are not a JSON object: {str(raw)[:2000]}"
    return ToolCall(id=str(call.get("id") or ""), function=str(fn.get("name") or ""), arguments=args,
                    parse_error=error)


def assistant_from_inspect(msg: ChatMessageAssistant) -> dict[str, Any]:
    """Inspect's assistant message as lis's (OpenAI) dict."""
    out: dict[str, Any] = {"role": "assistant", "content": _text(msg.content)}
    if msg.tool_calls:
        out["tool_calls"] = [call_from_inspect(c) for c in msg.tool_calls]
        out["content"] = out["content"] or None  # no text beside the calls: null, as OpenAI-compatible servers send it
    reasoning = _reasoning(msg.content)
    if reasoning:
        out["reasoning_content"] = reasoning
    return out


def to_inspect(messages: list[dict[str, Any]], model: str | None = None) -> list[ChatMessage]:
    """lis's conversation (OpenAI dicts) as Inspect messages."""
    out: list[ChatMessage] = []
    for m in messages:
        role, content = m.get("role"), m.get("content")
        text = content if isinstance(content, str) else (json.dumps(content) if content is not None else "")
        if role == "system":
            out.append(ChatMessageSystem(content=text))
        elif role == "user":
            out.append(ChatMessageUser(content=text))
        elif role == "assistant":
            parts: list[Any] = []
            if m.get("reasoning_content"):
                parts.append(ContentReasoning(reasoning=m["reasoning_content"]))
            body: Any = text
            if parts:
                body = parts + ([ContentText(text=text)] if text else [])
            calls = [call_to_inspect(c) for c in m.get("tool_calls") or []]
            out.append(ChatMessageAssistant(content=body, tool_calls=calls or None, model=model))
        elif role == "tool":
            out.append(ChatMessageTool(content=text, tool_call_id=m.get("tool_call_id"),
                                       function=m.get("name") or None))
        else:
            raise ValueError(f"a message with role {role!r} has no Inspect counterpart")
    return out


def usage_from_inspect(u: ModelUsage | None) -> Usage:
    """Inspect's usage as lis's: prompt tokens are every input token (Inspect counts cache reads
    and writes apart from ``input_tokens``), cached tokens the cache reads."""
    if u is None:
        return Usage()
    prompt = u.input_tokens + (u.input_tokens_cache_read or 0) + (u.input_tokens_cache_write or 0)
    return Usage(prompt_tokens=prompt, completion_tokens=u.output_tokens, cached_tokens=u.input_tokens_cache_read)


def usage_to_inspect(prompt: int | None, completion: int | None, cached: int | None) -> ModelUsage:
    """lis's token counts as Inspect's usage (the inverse of :func:`usage_from_inspect`)."""
    prompt, completion, cached = prompt or 0, completion or 0, cached or 0
    return ModelUsage(input_tokens=max(0, prompt - cached), output_tokens=completion,
                      total_tokens=prompt + completion, input_tokens_cache_read=cached or None)

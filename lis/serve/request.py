"""A ``POST /v1/chat/completions`` body, validated: every problem is a 400 naming the field.

The fields and their meaning are documented in docs/service.md. ``max_completion_tokens`` /
``max_tokens`` budget the **whole episode** (all turns together); they and the ``lis`` extension's
``max_turns`` and ``timeout_s`` are clamped to ``serve.limits``. Fields in ``IGNORED`` are accepted and
ignored; those in ``REFUSED``, ``n`` > 1, ``logprobs``, non-text formats, non-zero penalties and any
field OpenAI does not define are refused.
"""
from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass, field
from typing import Any

from lis.models.base import Sampling
from lis.serve.conversation import ROLES, problem_statement, text_of
from lis.serve.errors import ApiError, bad_request
from lis.serve.settings import Limits

IGNORED = {"user", "metadata", "store", "service_tier", "parallel_tool_calls", "reasoning_effort",
           "prompt_cache_key", "safety_identifier", "verbosity"}
REFUSED = {"tools": "the agent works with its own sandbox tools; client tools are not supported",
           "tool_choice": "the agent works with its own sandbox tools; client tools are not supported",
           "functions": "the agent works with its own sandbox tools; client functions are not supported",
           "function_call": "the agent works with its own sandbox tools; client functions are not supported",
           "stop": "stop sequences would cut the agent's turns; not supported",
           "logit_bias": "not supported by the sandboxed agent",
           "top_logprobs": "log-probabilities are not returned by the sandboxed agent",
           "audio": "only text is supported", "prediction": "not supported by the sandboxed agent",
           "web_search_options": "the agent searches from its sandbox when the network allows it"}
KNOWN = IGNORED | set(REFUSED) | {"model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p",
                                  "seed", "stream", "stream_options", "n", "logprobs", "response_format",
                                  "modalities", "presence_penalty", "frequency_penalty", "lis"}
LIS_KEYS = {"max_turns", "timeout_s", "files"}


@dataclass
class ChatRequest:
    problem_statement: str
    files: dict[str, str]
    limits: Limits                       # the episode's effective limits (the ask clamped to the caps)
    sampling: Sampling                   # overrides of the model entry's sampling
    stream: bool = False
    include_usage: bool = False
    ignored: list[str] = field(default_factory=list)


def _number(body: dict, key: str, lo: float, hi: float, integer: bool = False) -> Any:
    v = body.get(key)
    if v is None:
        return None
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    if isinstance(v, bool) or not ok or not math.isfinite(v) or not lo <= v <= hi:
        kind = "an integer" if integer else "a number"
        raise bad_request(f"{key} must be {kind} in [{lo:g}, {hi:g}], got {v!r}", key)
    return v


def _files(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad_request("lis.files must be an object {name: text}", "lis.files")
    out = {}
    for name, text in value.items():
        norm = posixpath.normpath(name) if isinstance(name, str) else ""
        if not name or norm.startswith(("/", "..")) or norm == "." or "\x00" in name:
            raise bad_request(f"lis.files: {name!r} is not a relative file name inside /testbed/input", "lis.files")
        if not isinstance(text, str):
            raise bad_request(f"lis.files[{name!r}] must be the file's text (a string)", "lis.files")
        out[norm] = text
    return out


def _messages(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise bad_request("messages must be a non-empty list of {role, content} objects", "messages")
    for i, m in enumerate(value):
        if not isinstance(m, dict):
            raise bad_request(f"messages[{i}] must be an object, got {type(m).__name__}", f"messages[{i}]")
        if m.get("role") not in ROLES:
            raise bad_request(f"messages[{i}].role must be one of {', '.join(ROLES)}, got {m.get('role')!r}",
                              f"messages[{i}].role")
    if value[-1]["role"] != "user":
        raise bad_request(f"the last message must come from the user (it is the task), got {value[-1]['role']!r}",
                          f"messages[{len(value) - 1}].role")
    return value


def parse(body: Any, served_name: str, caps: Limits) -> ChatRequest:
    """A validated ChatRequest; raises ApiError (400, or 404 for an unknown model)."""
    if not isinstance(body, dict):
        raise bad_request(f"the body must be a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - KNOWN)
    if unknown:
        raise bad_request(f"unrecognized request argument(s): {', '.join(unknown)}", unknown[0],
                          code="unknown_parameter")
    for key, why in REFUSED.items():
        if body.get(key) not in (None, [], {}):
            raise bad_request(f"{key}: {why}", key, code="unsupported_parameter")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad_request("model is required: the served name (GET /v1/models)", "model")
    if model != served_name:
        raise ApiError(404, f"the model {model!r} does not exist; this server serves {served_name!r}",
                       code="model_not_found", param="model")
    messages = _messages(body.get("messages"))
    if body.get("n") not in (None, 1):
        raise bad_request("n: only one choice per request (each is a whole episode; send more requests)", "n",
                          code="unsupported_parameter")
    if body.get("logprobs") not in (None, False):
        raise bad_request("logprobs: not returned by the sandboxed agent", "logprobs", code="unsupported_parameter")
    rf = body.get("response_format")
    if rf is not None and rf != {"type": "text"}:
        raise bad_request("response_format: only {\"type\": \"text\"}; ask for a format in the message instead",
                          "response_format", code="unsupported_parameter")
    if body.get("modalities") not in (None, ["text"]):
        raise bad_request("modalities: only [\"text\"]", "modalities", code="unsupported_parameter")
    for key in ("presence_penalty", "frequency_penalty"):
        if _number(body, key, -2, 2) not in (None, 0):
            raise bad_request(f"{key}: not supported by the sandboxed agent (use 0)", key, code="unsupported_parameter")
    stream = body.get("stream", False)
    if not isinstance(stream, bool) and stream is not None:
        raise bad_request(f"stream must be true or false, got {stream!r}", "stream")
    so = body.get("stream_options")
    if so is not None and (not isinstance(so, dict) or set(so) - {"include_usage", "include_obfuscation"}):
        raise bad_request("stream_options must be {\"include_usage\": bool}", "stream_options")
    if so is not None and not stream:
        raise bad_request("stream_options is only allowed with stream: true", "stream_options")
    ext = body.get("lis") or {}
    if not isinstance(ext, dict) or set(ext) - LIS_KEYS:
        extra = sorted(set(ext) - LIS_KEYS) if isinstance(ext, dict) else []
        raise bad_request(f"lis must be an object with keys {', '.join(sorted(LIS_KEYS))}"
                          + (f" (unknown: {', '.join(extra)})" if extra else ""), "lis")
    mt = _number(body, "max_completion_tokens", 1, 1 << 40, integer=True)
    if mt is None:
        mt = _number(body, "max_tokens", 1, 1 << 40, integer=True)
    turns = _number(ext, "max_turns", 1, 1 << 20, integer=True)
    timeout = _number(ext, "timeout_s", 1, 1e9)
    limits = Limits(max_turns=min(turns or caps.max_turns, caps.max_turns),
                    timeout_s=float(min(timeout or caps.timeout_s, caps.timeout_s)),
                    max_completion_tokens=min(mt or caps.max_completion_tokens, caps.max_completion_tokens))
    sampling = Sampling(temperature=_number(body, "temperature", 0, 2), top_p=_number(body, "top_p", 0, 1),
                        seed=_number(body, "seed", -(1 << 63), (1 << 63) - 1, integer=True))
    statement = problem_statement(messages)
    if not text_of(messages[-1].get("content"), f"messages[{len(messages) - 1}]").strip():
        raise bad_request("the last user message is empty: say what the agent should do",
                          f"messages[{len(messages) - 1}].content")
    return ChatRequest(problem_statement=statement, files=_files(ext.get("files")), limits=limits, sampling=sampling,
                       stream=bool(stream), include_usage=bool((so or {}).get("include_usage")),
                       ignored=sorted(k for k in body if k in IGNORED))

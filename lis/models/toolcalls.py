"""Tool calls in plain OpenAI form, and a check of a call against the tool schemas it was offered.

Every backend returns tool calls as ``{"id", "type": "function", "function": {"name",
"arguments": <JSON string>}}``, whatever the provider or parser produced (pydantic objects, dicts
with dict arguments, calls without ids).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list,), "object": (dict,),
}


def call_id(*parts: Any) -> str:
    """A deterministic tool-call id derived from ``parts`` (same output → same id)."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return f"call_{digest[:16]}"


def normalize_tool_calls(calls: list[Any] | None, salt: Any = "") -> list[dict[str, Any]]:
    """OpenAI-format copies of ``calls`` (dicts or objects with ``model_dump``): flat calls wrapped in
    ``function``, dict arguments JSON-encoded, a missing id derived from ``salt``, the position and the
    call; entries without a function name dropped."""
    out: list[dict[str, Any]] = []
    for i, call in enumerate(calls or []):
        if hasattr(call, "model_dump"):
            call = call.model_dump(exclude_none=True)
        if not isinstance(call, dict):
            continue
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            continue
        args = fn.get("arguments")
        if args is None:
            args = "{}"
        elif not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        out.append({"id": call.get("id") or call_id(salt, i, name, args), "type": "function",
                    "function": {"name": name, "arguments": args}})
    return out


def arguments_as_dicts(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``messages`` whose tool-call arguments are dicts, as chat templates expect them
    (arguments that are not a JSON object stay strings)."""
    out = []
    for m in messages:
        if m.get("role") == "assistant" and m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                fn = dict(c.get("function", c))
                if isinstance(fn.get("arguments"), str):
                    try:
                        parsed = json.loads(fn["arguments"])
                    except json.JSONDecodeError:
                        parsed = None
                    if isinstance(parsed, dict):
                        fn["arguments"] = parsed
                calls.append({**c, "function": fn} if "function" in c else fn)
            m = {**m, "tool_calls": calls}
        out.append(m)
    return out


def check_tool_call(call: dict[str, Any], tools: list[dict[str, Any]]) -> str | None:
    """Why ``call`` (OpenAI format) is not a valid call of one of ``tools``, or None when it is.

    Valid: the name is one of the tools, the arguments are a JSON object with every required
    parameter, no unknown parameter, and each value has its schema's JSON type (and enum value).
    """
    fn = call.get("function") or {}
    schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools}
    name = fn.get("name")
    if name not in schemas:
        return f"unknown tool {name!r}"
    try:
        args = json.loads(fn.get("arguments") or "{}")
    except json.JSONDecodeError as e:
        return f"arguments are not JSON ({e.msg})"
    if not isinstance(args, dict):
        return "arguments are not a JSON object"
    props = schemas[name].get("properties") or {}
    missing = [k for k in schemas[name].get("required") or [] if k not in args]
    if missing:
        return f"missing {', '.join(missing)}"
    for key, value in args.items():
        if key not in props:
            return f"unknown parameter {key!r}"
        spec = props[key]
        types = _JSON_TYPES.get(spec.get("type", ""), (object,))
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return f"{key} is not of type {spec.get('type')}"
        if "enum" in spec and value not in spec["enum"]:
            return f"{key}={value!r} is not one of {spec['enum']}"
    return None

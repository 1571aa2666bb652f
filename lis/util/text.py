"""The one rule for text that comes from a model: invalid Unicode is replaced by U+FFFD, and counted.

A model's output can hold what no UTF-8 file, pipe or socket accepts: a lone surrogate
(``"\\udcff"`` is valid JSON, and ``json.loads`` turns it into a str that cannot be encoded), or
bytes that are not UTF-8 at all, which would crash whatever encodes it next. So model output is made
safe where it enters lis (:func:`safe_result`), and the number of replacements goes into the
trajectory (``Step.invalid_text``, ``Trajectory.invalid_text``):

    text, n = safe_text("a\\udcffb")        # ("a\\ufffdb", 1)
    msg, n = safe_message(result.message)  # content, reasoning, tool-call names, arguments (keys too)

Valid surrogate pairs written as two code points are joined into their character, not replaced.
Text that is already valid comes back unchanged (the same object), so token-exact records keep
their exact arguments.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable

REPLACEMENT = "\ufffd"
_R_BYTES = REPLACEMENT.encode()


def safe_text(value: str | bytes | bytearray) -> tuple[str, int]:
    """(``value`` as valid Unicode, how many invalid pieces were replaced by U+FFFD): a str's lone
    surrogates (a valid pair is joined), or the undecodable pieces of UTF-8 bytes."""
    if isinstance(value, (bytes, bytearray)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8"), 0
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            return text, text.count(REPLACEMENT) - raw.count(_R_BYTES)
    try:
        value.encode("utf-8")
        return value, 0
    except UnicodeEncodeError:
        fixed = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return fixed, fixed.count(REPLACEMENT) - value.count(REPLACEMENT)


def safe_value(value: Any) -> tuple[Any, int]:
    """A copy of a JSON-like value (str, bytes, list, tuple, dict: keys too) with every string made
    safe, and the number of replacements. Other values come back as they are."""
    if isinstance(value, (str, bytes, bytearray)):
        return safe_text(value)
    if isinstance(value, dict):
        return _safe_dict(value)
    if isinstance(value, (list, tuple)):
        items, n = [], 0
        for v in value:
            v2, a = safe_value(v)
            items.append(v2)
            n += a
        return (type(value)(items), n) if n else (value, 0)
    return value, 0


def _safe_dict(d: dict, fix: Callable[[Any, Any], tuple[Any, int]] | None = None) -> tuple[dict, int]:
    """``d`` with its keys made safe and each value by ``fix(key, value)`` (default: :func:`safe_value`);
    the same object when nothing was replaced."""
    out, n = {}, 0
    for k, v in d.items():
        k2, a = safe_text(k) if isinstance(k, (str, bytes, bytearray)) else (k, 0)
        v2, b = fix(k, v) if fix else safe_value(v)
        out[k2] = v2
        n += a + b
    return (out, n) if n else (d, 0)


def safe_arguments(arguments: Any) -> tuple[Any, int]:
    """Tool-call arguments made safe. A JSON string keeps its exact text unless something in it was
    invalid: raw lone surrogates, or escaped ones (``"\\\\udcff"``) in a key or a value, which
    ``json.loads`` would turn into unencodable text; then it is re-encoded from the safe object."""
    if not isinstance(arguments, (str, bytes, bytearray)):
        return safe_value(arguments)
    text, n = safe_text(arguments)
    if "\\u" not in text and "\\U" not in text:
        return text, n
    try:
        parsed = json.loads(text)
    except ValueError:
        return text, n
    clean, m = safe_value(parsed)
    if m:
        text = json.dumps(clean, ensure_ascii=False)
    return text, n + m


def safe_message(message: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """(an assistant message (OpenAI format) with all its text made safe, the replacements): every field,
    and each tool call's arguments also when escaped inside their JSON; the same object when none."""
    def fix(key: Any, value: Any) -> tuple[Any, int]:
        if key == "tool_calls" and isinstance(value, list):
            calls = [_safe_call(call) for call in value]
            n = sum(m for _, m in calls)
            return ([c for c, _ in calls] if n else value), n
        return safe_value(value)

    return _safe_dict(message, fix)


def _safe_call(call: Any) -> tuple[Any, int]:
    if not isinstance(call, dict):
        return safe_value(call)
    out, n = {}, 0
    for key, value in call.items():
        if key == "function" and isinstance(value, dict):
            out[key], b = _safe_dict(value, lambda k, v: safe_arguments(v) if k == "arguments" else safe_value(v))
        elif key == "arguments":  # a flat call
            out[key], b = safe_arguments(value)
        else:
            out[key], b = safe_value(value)
        n += b
    return (out, n) if n else (call, 0)


def safe_result(result: Any) -> Any:
    """A ChatResult whose message is safe; ``invalid_text`` adds the replacements made here to those
    the backend already made (e.g. undecodable bytes in its response). Idempotent."""
    message, n = safe_message(result.message)
    if not n:
        return result
    return dataclasses.replace(result, message=message, invalid_text=(getattr(result, "invalid_text", 0) or 0) + n)


def tolerant(text: str) -> bytes:
    """``text`` as UTF-8 whatever it holds (lone surrogates become U+FFFD): for every encode after the
    boundary, so that nothing that slipped past it can crash a write."""
    return safe_text(text)[0].encode("utf-8")

"""How a chat conversation becomes one agent task (the mapping documented in docs/service.md).

The last message, the user's, is the task (one message is exactly ``lis run --query``); ``system`` and
``developer`` messages go in an ``<instructions>`` block before it (the agent keeps its own system
prompt); earlier messages are context in a ``<conversation>`` block, oldest first, one ``[role]``
header per message. Content is a string or a list of text parts; other parts are refused with a 400.
"""
from __future__ import annotations

import json
from typing import Any

from lis.serve.errors import bad_request

ROLES = ("system", "developer", "user", "assistant", "tool")


def text_of(content: Any, where: str) -> str:
    """The text of a message's content (a string or text parts). Raises ApiError(400)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for i, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise bad_request(f"{where}.content[{i}]: only text parts are supported (got {kind!r}); the agent "
                                  "reads files given as text in lis.files", f"{where}.content")
            out.append(part["text"])
        return "\n".join(out)
    raise bad_request(f"{where}.content must be a string or a list of text parts, got {type(content).__name__}",
                      f"{where}.content")


def _calls(msg: dict[str, Any]) -> list[str]:
    out = []
    for c in msg.get("tool_calls") or []:
        fn = (c or {}).get("function") or {}
        args = fn.get("arguments")
        out.append(f"[assistant called {fn.get('name', '?')}({args if isinstance(args, str) else json.dumps(args)})]")
    return out


def problem_statement(messages: list[dict[str, Any]]) -> str:
    """The task text of a validated conversation (see the module doc for the mapping)."""
    *earlier, last = messages
    task = text_of(last.get("content"), f"messages[{len(messages) - 1}]")
    instructions, transcript = [], []
    for i, m in enumerate(earlier):
        text = text_of(m.get("content"), f"messages[{i}]")
        role = m["role"]
        if role in ("system", "developer"):
            if text.strip():
                instructions.append(text.strip())
            continue
        header = f"[{role}{' ' + m['name'] if role == 'tool' and m.get('name') else ''}]"
        body = [text.strip()] if text.strip() else []
        if role == "assistant":
            body += _calls(m)
        transcript.append(header + "\n" + ("\n".join(body) if body else "(empty)"))
    parts = []
    if instructions:
        parts.append("<instructions>\n" + "\n\n".join(instructions) + "\n</instructions>")
    if transcript:
        parts.append("<conversation>\n" + "\n\n".join(transcript) + "\n</conversation>")
    if not parts:
        return task
    return "\n\n".join(parts) + "\n\nThe current request (answer this one, using the above as context):\n" + task

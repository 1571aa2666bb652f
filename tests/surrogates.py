"""Model replies that carry invalid Unicode where model output enters lis: a lone surrogate
(``"\\udcff"``, valid JSON) in the assistant's text and reasoning, in tool-call arguments (escaped
inside the arguments' JSON, and raw), in editor text and in an argument's key. Served by a real
OpenAI-compatible server (ChatServer around a ScriptedModel), they reach lis as any server's would."""
from __future__ import annotations

from lis.models.scripted import assistant, tool_call

S = "\udcff"
FFFD = "\ufffd"


def sandbox_replies(answer: str = "42") -> list[dict]:
    """Four turns of an agent whose output holds 7 lone surrogates; it writes /testbed/output/bash.txt
    (from a command), editor.txt (through the editor), the answer (both answer paths), and submits."""
    first = assistant(f"I will look{S}", tool_call("execute_bash", {
        "command": f"mkdir -p /testbed/output && printf 'a{S}b' > /testbed/output/bash.txt"}))
    first["reasoning_content"] = f"thinking{S}"
    return [
        first,                                                                    # text, reasoning, argument: 3
        assistant(None, tool_call("str_replace_editor", {"command": "create", "path": "/testbed/output/editor.txt",
                                                         "file_text": f"x{S}y\n"})),  # editor text: 1
        assistant(None, tool_call("execute_bash", {"command": "echo keys", f"ti{S}meout": 5}),  # a key: 1
                  tool_call("execute_bash", '{"command": "echo raw\udcff"}')),   # raw in the arguments text: 1
        assistant(f"done{S}", tool_call("execute_bash", {                          # text: 1
            "command": f"printf {answer} > /testbed/output/answer.txt && printf {answer} > /testbed/answer.txt"}),
                  tool_call("submit", {})),
    ]


SANDBOX_INVALID = 7  # lone surrogates in sandbox_replies(): each becomes one U+FFFD, counted


def text_only_replies(answer: str = "42") -> list[dict]:
    """One turn whose lone surrogates (3) never reach the sandbox nor a second model call: in the
    assistant's text and reasoning and in an argument's key. Only the record holds them (where a
    strict encode of the trajectory used to fail after the episode ended)."""
    only = assistant(f"done{S}", tool_call("execute_bash", {
        "command": f"mkdir -p /testbed/output && printf {answer} > /testbed/output/answer.txt", f"ti{S}meout": 30}),
                     tool_call("submit", {}))
    only["reasoning_content"] = f"r{S}"
    return [only]


TEXT_ONLY_INVALID = 3

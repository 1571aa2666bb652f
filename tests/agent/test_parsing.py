"""Tool calls written as text (lis/agent/parsing.py: the Qwen/Hermes ``<tool_call>`` blocks), without a
sandbox: what each block becomes, and what is left of the content."""
from __future__ import annotations

import json

from lis.agent.parsing import INVALID, parse_text_tool_calls


def _calls(content, salt="s"):
    calls, rest = parse_text_tool_calls(content, salt)
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls], rest, calls


def test_blocks_become_calls_in_order_and_leave_the_prose():
    text = ('Let me look.\n<tool_call>\n{"name": "execute_bash", "arguments": {"command": "ls /testbed"}}\n</tool_call>\n'
            '<tool_call>{"name": "str_replace_editor", "parameters": {"command": "view", "path": "/testbed"}}</tool_call>')
    got, rest, calls = _calls(text)
    assert got == [("execute_bash", {"command": "ls /testbed"}),
                   ("str_replace_editor", {"command": "view", "path": "/testbed"})]  # "parameters" read as arguments
    assert rest == "Let me look."
    assert all(c["type"] == "function" and c["id"] for c in calls) and len({c["id"] for c in calls}) == 2
    assert [c["id"] for c in _calls(text)[2]] == [c["id"] for c in calls]  # ids: from the salt and the call
    assert [c["id"] for c in _calls(text, salt="other")[2]] != [c["id"] for c in calls]


def test_arguments_given_as_a_json_string_are_kept_as_they_are():
    calls, _ = parse_text_tool_calls('<tool_call>{"name": "execute_bash", "arguments": "{\\"command\\": \\"pwd\\"}"}'
                                     '</tool_call>')
    assert calls[0]["function"]["arguments"] == '{"command": "pwd"}'


def test_a_broken_or_cut_block_is_an_invalid_call_naming_its_text():
    got, rest, _ = _calls('<tool_call>{"name": "execute_bash", "arguments": {"command": "ls}</tool_call>')
    assert got == [(INVALID, {"text": '{"name": "execute_bash", "arguments": {"command": "ls}'})] and rest == ""
    # cut off at the token budget: no closing tag, the block runs to the end
    got, rest, _ = _calls('thinking\n<tool_call>{"name": "submit", "argum')
    assert got == [(INVALID, {"text": '{"name": "submit", "argum'})] and rest == "thinking"
    # JSON that is not a call (no name, not an object)
    assert _calls("<tool_call>[1, 2]</tool_call>")[0] == [(INVALID, {"text": "[1, 2]"})]
    assert _calls('<tool_call>{"arguments": {}}</tool_call>')[0][0][0] == INVALID
    # a huge broken block is echoed in part
    assert len(_calls("<tool_call>" + "x" * 10_000 + "</tool_call>")[0][0][1]["text"]) == 500


def test_content_without_blocks_is_left_alone():
    assert parse_text_tool_calls("no calls here", "s") == ([], "no calls here")
    assert parse_text_tool_calls(None, "s") == ([], "")
    assert parse_text_tool_calls("", "s") == ([], "")

"""Editor and tool error messages cap what they echo: a 1 MB old_str, a 200 KB path, a 1 MB tool
or command name come back as a few hundred characters and a count, never in full (a model that
sent them used to get them back whole, and its episode ended at token_budget). Real sandbox."""
from __future__ import annotations

import json

import pytest

from lis.agent.tools.dispatch import ToolSettings, execute_tool_call

pytestmark = pytest.mark.docker
S = ToolSettings(command_timeout_s=20)
MB = 1 << 20
CAP = 2000  # every observation below stays under this many characters


def ed(sb, **args):
    return execute_tool_call(sb, "str_replace_editor", args, S)


def capped(o, n_more: int | None = None) -> str:
    assert len(o.observation) < CAP, (len(o.observation), o.observation[:300])
    assert "more characters)" in o.observation, o.observation
    if n_more is not None:
        assert f"({n_more} more characters)" in o.observation, o.observation
    return o.observation


def test_a_1mb_old_str_that_is_not_found_is_not_echoed_in_full(sb):
    sb.write_file("/testbed/notes.txt", "alpha\nbeta\n")
    o = ed(sb, command="str_replace", path="/testbed/notes.txt", old_str="q" * MB, new_str="x")
    assert o.error == "editor" and "did not appear verbatim" in capped(o, MB - 300)
    # a short one is still echoed whole, as the official editor does
    o = ed(sb, command="str_replace", path="/testbed/notes.txt", old_str="gamma", new_str="x")
    assert "old_str `gamma` did not appear verbatim in /testbed/notes.txt" in o.observation


@pytest.mark.parametrize("command", ["view", "create", "str_replace", "insert"])
def test_a_200kb_path_is_refused_with_a_capped_echo(sb, command):
    path = "/testbed/" + "p" * 200_000
    o = ed(sb, command=command, path=path, file_text="x", old_str="a", new_str="b", insert_line=0)
    assert o.error == "editor" and "200009 characters" in capped(o)


def test_a_200kb_relative_path_is_capped(sb):
    o = ed(sb, command="view", path="p" * 200_000)
    assert o.error == "editor" and "not an absolute path" in capped(o)


def test_a_1mb_tool_name_and_editor_command_are_capped(sb):
    o = execute_tool_call(sb, "t" * MB, {"command": "ls"}, S)
    assert o.error == "unknown_tool" and "Available tools" in capped(o)
    o = ed(sb, command="c" * MB, path="/testbed")
    assert o.error == "editor" and "Unrecognized command" in capped(o)


def test_a_1mb_bash_command_name_is_capped(sb):
    """bash echoes an unknown command back ("x…: command not found"): capped with the output."""
    o = execute_tool_call(sb, "execute_bash", {"command": "x" * MB}, S)
    assert len(o.observation) < 25_000 and "command not found" in o.observation


def test_huge_numbers_are_capped_and_never_raise(sb):
    sb.write_file("/testbed/notes.txt", "alpha\n")
    big = int("9" * 4000)
    o = ed(sb, command="insert", path="/testbed/notes.txt", insert_line=big, new_str="x")
    assert o.error == "editor" and "Invalid `insert_line`" in capped(o)
    o = ed(sb, command="view", path="/testbed/notes.txt", view_range=[1, big])
    assert o.error == "editor" and "Invalid view_range" in capped(o)
    # a number too long for Python's int conversion (JSON allows it): an error observation, not an exception
    raw = '{"command": "insert", "path": "/testbed/notes.txt", "new_str": "x", "insert_line": 1' + "0" * 5000 + "}"
    o = execute_tool_call(sb, "str_replace_editor", raw, S)
    assert o.error == "bad_json" and len(o.observation) < CAP


def test_an_edit_with_a_1mb_line_shows_a_capped_snippet(sb):
    sb.write_file("/testbed/notes.txt", "alpha\nbeta\n")
    o = ed(sb, command="str_replace", path="/testbed/notes.txt", old_str="beta", new_str="n" * MB)
    assert o.error is None and "has been edited" in o.observation
    assert len(o.observation) <= S.max_chars + 200
    assert len(sb.read_file("/testbed/notes.txt")) == len("alpha\n") + MB + 1  # the edit itself is whole
    o = ed(sb, command="insert", path="/testbed/notes.txt", insert_line=0, new_str="i" * MB)
    assert o.error is None and len(o.observation) <= S.max_chars + 200


def test_the_capped_observation_is_valid_json_text(sb):
    """What the cap cuts never splits a character the model would see half of."""
    sb.write_file("/testbed/notes.txt", "alpha\n")
    o = ed(sb, command="str_replace", path="/testbed/notes.txt", old_str="é" * 100_000, new_str="x")
    json.dumps(o.observation).encode("utf-8")
    assert len(capped(o)) < CAP


def test_a_nul_in_a_path_or_a_command_is_an_observation_not_an_exception(sb):
    o = ed(sb, command="view", path="/testbed/a\0b")
    assert o.error == "editor" and "NUL" in o.observation
    o = execute_tool_call(sb, "execute_bash", {"command": "echo a\0b"}, S)
    assert isinstance(o.observation, str) and len(o.observation) < CAP

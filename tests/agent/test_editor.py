"""str_replace_editor against a real sandbox."""
from __future__ import annotations

import pytest

from lis.agent.tools.dispatch import ToolSettings, execute_tool_call

pytestmark = pytest.mark.docker
S = ToolSettings(command_timeout_s=10)


def ed(sb, **args):
    return execute_tool_call(sb, "str_replace_editor", args, S)


def test_view_any_text_file_with_numbers_and_range(sb):
    sb.write_file("/testbed/notes.txt", "alpha\nbeta\ngamma\n")
    o = ed(sb, command="view", path="/testbed/notes.txt")
    assert o.error is None and "     1\talpha\n     2\tbeta\n     3\tgamma" in o.observation
    o = ed(sb, command="view", path="/testbed/notes.txt", view_range=[2, -1])
    assert "     2\tbeta\n     3\tgamma" in o.observation and "alpha" not in o.observation
    o = ed(sb, command="view", path="/testbed/notes.txt", view_range=[3, 9])
    assert o.error == "editor" and "Invalid view_range" in o.observation


def test_view_directory_lists_all_files_two_levels(sb):
    sb.put_files({"a.txt": "a", "sub/b.csv": "b", "sub/deep/c.md": "c", ".hidden": "h"}, "/testbed/documents")
    o = ed(sb, command="view", path="/testbed/documents")
    assert "/testbed/documents/a.txt" in o.observation and "/testbed/documents/sub/b.csv" in o.observation
    assert ".hidden" not in o.observation and "c.md" not in o.observation  # 2 levels, no hidden


def test_create_large_file_and_odd_path(sb):
    big = "line\n" * 100_000  # 500 KB: the official `echo` create breaks past ~128 KB
    path = "/testbed/out dir/(weird) 'name' $x.txt"
    o = ed(sb, command="create", path=path, file_text=big)
    assert o.error is None and "created" in o.observation
    assert sb.read_file(path).decode() == big
    o = ed(sb, command="create", path=path, file_text="new\n")
    assert "overwritten" in o.observation


def test_str_replace_needs_exactly_one_match(sb):
    sb.write_file("/testbed/f.py", "x = 1\ny = 1\n")
    o = ed(sb, command="str_replace", path="/testbed/f.py", old_str="= 1", new_str="= 2")
    assert o.error == "editor" and "occurs 2 times" in o.observation and "[1, 2]" in o.observation
    o = ed(sb, command="str_replace", path="/testbed/f.py", old_str="z = 1", new_str="")
    assert "did not appear verbatim" in o.observation
    o = ed(sb, command="str_replace", path="/testbed/f.py", old_str="y = 1", new_str="y = 3")
    assert o.error is None and "     2\ty = 3" in o.observation
    assert sb.read_file("/testbed/f.py") == b"x = 1\ny = 3\n"


def test_crlf_survives_an_edit(sb):
    sb.write_file("/testbed/w.txt", b"a\r\nb\r\n")
    ed(sb, command="str_replace", path="/testbed/w.txt", old_str="b", new_str="c")
    assert sb.read_file("/testbed/w.txt") == b"a\r\nc\r\n"


def test_insert(sb):
    sb.write_file("/testbed/i.txt", "one\nthree\n")
    o = ed(sb, command="insert", path="/testbed/i.txt", insert_line=1, new_str="two")
    assert o.error is None and sb.read_file("/testbed/i.txt") == b"one\ntwo\nthree\n"
    o = ed(sb, command="insert", path="/testbed/i.txt", insert_line=0, new_str="zero")
    assert sb.read_file("/testbed/i.txt") == b"zero\none\ntwo\nthree\n"
    o = ed(sb, command="insert", path="/testbed/i.txt", insert_line=99, new_str="x")
    assert "within [0, 4]" in o.observation


def test_binary_missing_relative_and_unknown(sb):
    sb.write_file("/testbed/b.bin", bytes(range(256)))
    assert "binary file" in ed(sb, command="view", path="/testbed/b.bin").observation
    assert "does not exist" in ed(sb, command="view", path="/testbed/none.txt").observation
    assert "not an absolute path" in ed(sb, command="view", path="notes.txt").observation
    assert "Unrecognized command" in ed(sb, command="delete", path="/testbed/b.bin").observation
    assert "`file_text` is required" in ed(sb, command="create", path="/testbed/x").observation


def test_malformed_calls_become_observations(sb):
    o = execute_tool_call(sb, "execute_bash", '{"command": ', S)
    assert o.error == "bad_json" and "not valid JSON" in o.observation
    o = execute_tool_call(sb, "execute_bash", "[1, 2]", S)
    assert o.error == "bad_json" and "JSON object" in o.observation
    o = execute_tool_call(sb, "run_python", "{}", S)
    assert o.error == "unknown_tool" and "str_replace_editor" in o.observation
    o = execute_tool_call(sb, "execute_bash", "{}", S)
    assert o.error == "missing_argument" and "No command provided" in o.observation
    o = execute_tool_call(sb, "submit", "{}", S)
    assert o.done and o.observation == "<<< Finished >>>"


REFUSED = ("Execution output of [str_replace_editor]:\nERROR: Viewing non-Python files is disallowed for saving context. "
           "File '/testbed/notes.txt' is not a .py or .rst file.")


def test_view_restricted_to_py_and_rst_as_in_the_0_2_package(sb):
    """agent.editor.view_extensions [".py", ".rst"]: other files are refused with 0.2's words, listings
    show folders and those files only; the other commands are not restricted (as in 0.2)."""
    only = ToolSettings(command_timeout_s=10, view_extensions=(".py", ".rst"))
    sb.put_files({"m.py": "x = 1\n", "d.rst": "Title\n", "sub/e.py": "y\n", "sub/f.csv": "1\n"}, "/testbed/w")
    sb.write_file("/testbed/notes.txt", "alpha\n")
    o = execute_tool_call(sb, "str_replace_editor", {"command": "view", "path": "/testbed/notes.txt"}, only)
    assert o.observation == REFUSED and o.error == "editor"
    o = execute_tool_call(sb, "str_replace_editor", {"command": "view", "path": "/testbed/w/m.py"}, only)
    assert o.error is None and "     1\tx = 1" in o.observation
    o = execute_tool_call(sb, "str_replace_editor", {"command": "view", "path": "/testbed/w/d.rst"}, only)
    assert o.error is None and "     1\tTitle" in o.observation
    listing = execute_tool_call(sb, "str_replace_editor", {"command": "view", "path": "/testbed/w"}, only).observation
    assert "/testbed/w/m.py" in listing and "/testbed/w/d.rst" in listing and "/testbed/w/sub/e.py" in listing
    assert "/testbed/w/sub\n" in listing + "\n" and "f.csv" not in listing
    o = execute_tool_call(sb, "str_replace_editor", {"command": "str_replace", "path": "/testbed/notes.txt",
                                                     "old_str": "alpha", "new_str": "beta"}, only)
    assert o.error is None and sb.read_file("/testbed/notes.txt") == b"beta\n"
    # the default (None): any text file, every entry
    assert ed(sb, command="view", path="/testbed/notes.txt").error is None
    assert "f.csv" in ed(sb, command="view", path="/testbed/w").observation


def test_view_extensions_param_reaches_the_episode(sb):
    """params agent.editor.view_extensions → agent_config → ToolSettings → the editor, in a real episode."""
    import dataclasses

    from lis.agent import Trajectory, run_episode
    from lis.runtime import agent_config
    from lis.models.scripted import ScriptedModel, assistant, tool_call
    from lis.params import load
    from tests.conftest import ROOT

    p = load(ROOT, profile="ci")
    assert p.section("agent")["editor"]["view_extensions"] is None  # the default: any text file
    assert agent_config(p, domain="math").tools.view_extensions is None
    agent = {**p.data["agent"], "editor": {"view_extensions": [".py", ".rst"]}}
    cfg = agent_config(dataclasses.replace(p, data={**p.data, "agent": agent}), domain="math")
    assert cfg.tools.view_extensions == (".py", ".rst")
    sb.write_file("/testbed/notes.txt", "alpha\n")
    model = ScriptedModel([assistant(None, tool_call("str_replace_editor", {"command": "view", "path": "/testbed/notes.txt"})),
                           assistant(None, tool_call("submit", {}))])
    rec = Trajectory(task_id="t", model="scripted", mode="sandbox")
    run_episode(model, sb, [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
                dataclasses.replace(cfg, max_turns=3), rec)
    assert rec.steps[0].calls[0].observation.startswith(REFUSED)

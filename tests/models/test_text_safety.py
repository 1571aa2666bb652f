"""Text made safe at the model boundary: invalid Unicode in a model's output (lone surrogates, bytes
that are not UTF-8) is replaced by U+FFFD and counted in the trajectory, whatever the backend; the
client of OpenAI-compatible servers survives both; `lis run` finishes and writes its trajectory;
``Sandbox.exec`` reads a refused reply's status instead of unpacking it."""
from __future__ import annotations

import json

import pytest

from lis.models.openai_compat import OpenAIChatModel
from lis.models.scripted import ScriptedModel, tool_call
from lis.models.server import ChatServer
from tests.canned_http import canned_http
from tests.conftest import run
from tests.surrogates import FFFD, S, SANDBOX_INVALID, sandbox_replies

USER = [{"role": "user", "content": "hi"}]


def test_safe_text_replaces_and_counts():
    from lis.util.text import safe_message, safe_text

    assert safe_text("plain") == ("plain", 0)
    assert safe_text(f"a{S}b{S}") == (f"a{FFFD}b{FFFD}", 2)
    assert safe_text("\ud83d\ude00") == ("\U0001f600", 0)  # a valid pair written as two code points: joined
    assert safe_text(b"ok \xff \xe2\x82") == (f"ok {FFFD} {FFFD}", 2)
    assert safe_text(f"kept {FFFD}".encode()) == (f"kept {FFFD}", 0)  # a real U+FFFD is not counted
    clean = {"role": "assistant", "content": "fine", "tool_calls": [tool_call("execute_bash", '{"command":  "ls"}')]}
    assert safe_message(clean) == (clean, 0) and safe_message(clean)[0] is clean  # exact text kept
    msg, n = safe_message(sandbox_replies()[2])
    assert n == 2
    keyed, raw = (json.loads(c["function"]["arguments"]) for c in msg["tool_calls"])
    assert keyed == {"command": "echo keys", f"ti{FFFD}meout": 5} and raw == {"command": f"echo raw{FFFD}"}


def test_the_openai_client_makes_surrogates_safe_and_counts_them():
    """Every place of a reply: text, reasoning, arguments (escaped and raw), editor text, a key."""
    replies = sandbox_replies()
    with ChatServer(ScriptedModel(replies, name="m")) as srv:
        model = OpenAIChatModel("m", base_url=srv.base_url, max_retries=0)
        results = [model.chat(USER) for _ in replies]
    assert [r.invalid_text for r in results] == [3, 1, 2, 1]
    for r in results:
        json.dumps(r.message, ensure_ascii=False).encode("utf-8")  # strict: raises if anything slipped through
    first = results[0].message
    assert first["content"] == f"I will look{FFFD}" and first["reasoning_content"] == f"thinking{FFFD}"
    assert FFFD in json.loads(first["tool_calls"][0]["function"]["arguments"])["command"]


def test_bytes_that_are_not_utf8_are_replaced_and_counted(unused_port):
    """A server whose body is not UTF-8 (the SDK raised UnicodeDecodeError, a traceback)."""
    body = (b'{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":'
            b'{"role":"assistant","content":"bad \xff byte"},"finish_reason":"stop"}],'
            b'"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}')

    with canned_http(unused_port, body) as url:
        res = OpenAIChatModel("m", base_url=f"{url}/v1", max_retries=0).chat(USER)
    assert res.message["content"] == f"bad {FFFD} byte" and res.invalid_text == 1


@pytest.mark.docker
def test_an_episode_with_a_scripted_backend_counts_in_the_trajectory(base_config):
    """A backend that is not the HTTP client (here the scripted one, called directly): the loop
    applies the same rule, and the trajectory's steps and totals count what was replaced."""
    from lis.agent import AgentConfig, Trajectory, run_episode
    from lis.sandbox import make_sandbox

    rec = Trajectory(task_id="t", model="scripted", mode="sandbox")
    with make_sandbox(base_config).start() as sb:
        run_episode(ScriptedModel(sandbox_replies()), sb, [{"role": "user", "content": "go"}],
                    AgentConfig(max_turns=6), rec)
        editor = sb.read_file("/testbed/output/editor.txt").decode("utf-8")
    assert rec.termination == "submitted" and rec.answer == "42", rec.error
    assert [s.invalid_text for s in rec.steps] == [3, 1, 2, 1] and rec.invalid_text == SANDBOX_INVALID
    assert editor == f"x{FFFD}y\n"
    assert all(c.error is None for s in rec.steps for c in s.calls)
    json.dumps(rec.to_dict(), ensure_ascii=False).encode("utf-8")


@pytest.mark.docker
def test_lis_run_finishes_and_writes_its_trajectory(image_tag, tmp_path):
    """`lis run` crashed (ValueError in Sandbox.exec, no trajectory); now it submits and keeps everything."""
    with ChatServer(ScriptedModel(sandbox_replies(), name="replay")) as srv:
        r = run(["lis", "run", "--profile", "ci", "--model", "replay", "--base-url", srv.base_url, "--query",
                 "Write the answer", "--output-dir", str(tmp_path)], check=False, timeout=300,
                env={"LIS_RUN_ID": "pytest-text-safety"})
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "Traceback" not in r.stderr + r.stdout
    (run_dir,) = tmp_path.iterdir()
    rec = json.loads((run_dir / "trajectory.json").read_text(encoding="utf-8"))
    assert rec["termination"] == "submitted" and rec["answer"] == "42"
    assert rec["invalid_text"] == SANDBOX_INVALID and [s["invalid_text"] for s in rec["steps"]] == [3, 1, 2, 1]
    assert (run_dir / "files/editor.txt").read_text(encoding="utf-8") == f"x{FFFD}y\n"
    assert (run_dir / "files/bash.txt").read_text(encoding="utf-8") == f"a{FFFD}b"
    assert rec["steps"][0]["content"] == f"I will look{FFFD}"
    assert rec["steps"][2]["calls"][0]["arguments"] == {"command": "echo keys", f"ti{FFFD}meout": 5}


@pytest.mark.docker
def test_exec_reads_a_refused_replys_status_before_unpacking(base_config):
    """sandboxd refuses an exec it cannot run (here a max_output it cannot read as a number): the reply
    has no payloads. exec used to unpack them first (ValueError); now the refusal is the result, and
    the sandbox lives on."""
    import dataclasses

    from lis.sandbox import make_sandbox

    cfg = dataclasses.replace(base_config, limits=dataclasses.replace(base_config.limits, max_output_bytes="lots"))
    with make_sandbox(cfg).start() as sb:
        r = sb.exec("echo hi")
        assert r.exit_code is None and r.reason == "error" and "could not run" in r.stderr and not r.ok
        sb.config.limits.max_output_bytes = 1 << 20
        assert sb.exec("echo hi").stdout == "hi\n"  # the same sandbox still works


@pytest.mark.docker
def test_tool_calls_written_as_text_follow_the_same_rule(base_config):
    """A model without a tool-call parser writes ``<tool_call>{json}</tool_call>``; its JSON may escape
    a lone surrogate (valid text, invalid once parsed): in editor text and in a key. Both are replaced
    and counted; the editor writes valid UTF-8."""
    from lis.agent import AgentConfig, Trajectory, run_episode
    from lis.sandbox import make_sandbox

    edit = ('<tool_call>{"name": "str_replace_editor", "arguments": {"command": "create", '
            '"path": "/testbed/output/t.txt", "file_text": "a\\udcffb"}}</tool_call>')
    key = '<tool_call>{"name": "execute_bash", "arguments": {"command": "echo k", "x\\udcff": 1}}</tool_call>'
    done = ('<tool_call>{"name": "execute_bash", "arguments": {"command": "printf 7 > /testbed/answer.txt"}}'
            '</tool_call><tool_call>{"name": "submit", "arguments": {}}</tool_call>')
    rec = Trajectory(task_id="t", model="scripted", mode="sandbox")
    with make_sandbox(base_config).start() as sb:
        run_episode(ScriptedModel([edit, key, done]), sb, [{"role": "user", "content": "go"}],
                    AgentConfig(max_turns=4), rec)
        written = sb.read_file("/testbed/output/t.txt")
    assert rec.termination == "submitted" and rec.answer == "7", rec.error
    assert all(s.text_tool_calls for s in rec.steps) and [s.invalid_text for s in rec.steps] == [1, 1, 0]
    assert written == f"a{FFFD}b".encode() and rec.steps[1].calls[0].arguments == {"command": "echo k", f"x{FFFD}": 1}
    json.dumps(rec.to_dict(), ensure_ascii=False).encode("utf-8")

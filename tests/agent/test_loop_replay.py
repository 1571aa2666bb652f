"""Recorded episodes replayed: the loop's trajectories stay what they were.

Each scripted episode below runs in a real sandbox and its record (steps, calls, observations,
messages, token counts, termination), the conversations the model was sent and the steps
``on_step`` saw are compared with ``fixtures/loop_episodes.json``, times normalised away. The
fixture was recorded before the loop was split into steps (lis/agent/loop.py, lis/agent/turn.py).
``LIS_RECORD_LOOP_EPISODES=1 pytest tests/agent/test_loop_replay.py`` writes it anew: do that only
for a change meant to alter trajectories, and say so in its commit.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from lis.agent import AgentConfig, Trajectory, run_episode
from lis.agent.tools.dispatch import ToolSettings
from lis.models.base import ContextLengthError, ModelError, ModelTimeout
from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.sandbox.base import SandboxError

pytestmark = pytest.mark.docker
FIXTURE = Path(__file__).parent / "fixtures" / "loop_episodes.json"
START = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Solve it."}]
TIMES = {"started_utc", "wall_s", "llm_s", "env_s"}  # the record's, a step's and a call's times
STEP_TIMES = {"llm_latency_s"}
CALL_TIMES = {"exec_time_s"}


def call(name: str, args: dict[str, Any] | str, cid: str) -> dict[str, Any]:
    return tool_call(name, args, call_id=cid)  # explicit ids: the default one depends on PYTHONHASHSEED


def bash(cmd: str, cid: str) -> dict[str, Any]:
    return call("execute_bash", {"command": cmd}, cid)


def submit(cid: str = "c_submit") -> dict[str, Any]:
    return assistant(None, call("submit", {}, cid))


class Stop:
    """The episode's own cancellation token: set by the sandbox, the model or ``on_step`` below."""

    def __init__(self) -> None:
        self.set = False

    def __call__(self) -> bool:
        return self.set


class Script(ScriptedModel):
    """Scripted replies; a reply may be an exception (raised) or a callable (called, then its result
    raised or replied), and an exception is raised when the replies run out."""

    def __init__(self, replies: list[Any], then: Exception | None = None):
        self._special = {i: r for i, r in enumerate(replies) if isinstance(r, Exception) or callable(r)}
        super().__init__([r if i not in self._special else "" for i, r in enumerate(replies)])
        self.then = then

    def chat(self, messages, tools=None, sampling=None):
        i = self._i
        if i in self._special:
            self._i += 1
            self.calls.append(json.loads(json.dumps(messages)))
            r = self._special[i]
            raise (r() if callable(r) else r)
        if self.then is not None and self.remaining == 0:
            raise self.then
        return super().chat(messages, tools, sampling)


class Breaks:
    """A sandbox that fails like a killed one (SandboxError) for a command with BREAK in it (and sets
    the stop token first for one with KILLED), and sets the stop token after a command with STOP."""

    def __init__(self, sb, stop: Stop):
        self._sb, self._stop = sb, stop

    def exec(self, cmd, *a, **kw):
        text = cmd if isinstance(cmd, str) else " ".join(map(str, cmd))
        if "KILLED" in text:
            self._stop.set = True
        if "BREAK" in text or "KILLED" in text:
            raise SandboxError("the sandbox went away (exit 137)")
        out = self._sb.exec(cmd, *a, **kw)
        if "STOP" in text:
            self._stop.set = True
        return out

    def __getattr__(self, name):
        return getattr(self._sb, name)


def _stop_model(stop: Stop, exc: Exception) -> Callable[[], Exception]:
    def go():
        stop.set = True
        return exc
    return go


TEXT_CALL = 'Let me check.\n<tool_call>\n{"name": "execute_bash", "arguments": {"command": "echo hi"}}\n</tool_call>'
BAD_ESCAPE = '<tool_call>{"name": "execute_bash", "arguments": {"command": "echo \\udcff"}}</tool_call>'


def episodes(stop: Stop) -> dict[str, dict[str, Any]]:
    """name → replies (and cfg, sandbox wrapper, on_step's stop, the model's end)."""
    return {
        "submitted": {"replies": [
            assistant("look", bash("cd /testbed && ls -a && echo start", "c1")),
            assistant(None, call("str_replace_editor", {"command": "create", "path": "/testbed/answer.txt",
                                                        "file_text": "\\boxed{42}\n"}, "c2")),
            TEXT_CALL,
            assistant("two at once", bash("echo a > /testbed/a", "c3"), bash("cat /testbed/a; echo b >&2", "c4")),
            assistant("done", call("submit", {}, "c5"), bash("echo never", "c6")),
        ]},
        "max_turns": {"replies": [assistant(None, bash("echo 7 > /testbed/answer.txt", "c1")),
                                  assistant(None, bash("true", "c2")), submit()], "cfg": {"max_turns": 2}},
        "continue": {"replies": ["I think the answer is 3.", assistant(""), "Still thinking.", submit()]},
        "malformed": {"replies": [
            assistant(None, {"id": "b1", "type": "function",
                             "function": {"name": "execute_bash", "arguments": "{'command': ls}"}}),
            "<tool_call>{not json</tool_call>",
            assistant(None, call("delete_everything", {}, "b2")),
            assistant(None, call("execute_bash", {}, "b3")),
            assistant(None, call("execute_bash", "[1, 2]", "b4"), {"id": "b5", "type": "function",
                                                                   "function": {"name": "submit"}}),
        ]},
        "nameless_calls": {"replies": [assistant(None, {"id": "n1", "type": "function", "function": {"arguments": "{}"}},
                                                 {"id": "n2"}, {"type": "function", "function": {"name": "submit"}}),
                                       submit()]},
        "invalid_text": {"replies": ["caf\udcff and no call", BAD_ESCAPE, submit()]},
        "no_steps_remaining": {"replies": [assistant(None, bash("echo x", "c1")), "nothing", submit()],
                               "cfg": {"steps_remaining": False, "max_turns": 5}},
        "token_budget": {"replies": [assistant(None, bash("seq 1 5000", "c1")), assistant(None, bash("true", "c2"))],
                         "cfg": {"max_context_tokens": 120}},
        "token_budget_first_turn": {"replies": [submit()], "cfg": {"max_context_tokens": 5}},
        "context_length": {"replies": [assistant(None, bash("echo x", "c1"))],
                           "then": ContextLengthError("prompt too long", limit=10)},
        "model_error": {"replies": [assistant(None, bash("echo x", "c1"))]},  # the script runs out
        "model_timeout": {"replies": [ModelTimeout("no reply in time")]},
        "model_error_when_stopped": {"replies": [_stop_model(stop, ModelError("connection reset"))]},
        "timeout_at_start": {"replies": [submit()], "cfg": {"episode_timeout_s": 0.0}},
        "deadline_caps_commands": {"replies": [assistant(None, bash("echo capped", "c1")), submit()],
                                   "cfg": {"tools": ToolSettings(command_timeout_s=1e6)}},
        "sandbox_error": {"replies": [
            assistant(None, bash("echo ok", "c1")),
            assistant("again", bash("echo one", "c2"), bash("echo BREAK", "c3"), bash("echo after", "c4")),
        ], "sandbox": True},
        "sandbox_error_bad_args": {"replies": [
            assistant(None, call("str_replace_editor", "{not json", "c1"), bash("BREAK now", "c2")),
        ], "sandbox": True},
        "sandbox_killed_when_stopped": {"replies": [assistant(None, bash("echo KILLED", "c1"))], "sandbox": True},
        "interrupted_between_calls": {"replies": [
            assistant(None, bash("echo STOP", "c1"), bash("echo not run", "c2")), submit(),
        ], "sandbox": True},
        "interrupted_by_on_step": {"replies": [assistant(None, bash("echo x", "c1")), submit()], "stop_on_step": 1},
        "on_step_then_submit": {"replies": [assistant(None, bash("echo x", "c1")), "plain", submit()],
                                "stop_on_step": 99},
    }


def _normalised(rec: Trajectory) -> dict[str, Any]:
    d = json.loads(json.dumps(rec.to_dict()))
    for k in TIMES:
        d.pop(k)
    for s in d["steps"]:
        for k in STEP_TIMES:
            s.pop(k)
        for c in s["calls"]:
            for k in CALL_TIMES:
                c.pop(k)
    return d


def play(sb, spec: dict[str, Any], stop: Stop) -> dict[str, Any]:
    model = Script(spec["replies"], then=spec.get("then"))
    rec = Trajectory(task_id="t1", model="scripted", mode="sandbox", seed=7)
    seen: list[dict[str, Any]] = []

    def on_step(step):
        seen.append({"index": step.index, "calls": len(step.calls)})
        if len(seen) >= spec["stop_on_step"]:
            stop.set = True

    box = Breaks(sb, stop) if spec.get("sandbox") else sb
    out = run_episode(model, box, START, AgentConfig(**spec.get("cfg", {})), rec,
                      on_step=on_step if "stop_on_step" in spec else None, should_stop=stop)
    assert out is rec
    return {"record": _normalised(rec), "sent": json.loads(json.dumps(model.calls)), "on_step": seen}


def _all(sb) -> dict[str, Any]:
    got = {}
    for name in episodes(Stop()):
        stop = Stop()
        sb.exec("rm -rf /testbed/* /testbed/.[!.]* 2>/dev/null; true")
        got[name] = play(sb, episodes(stop)[name], stop)
    return got


def test_recorded_episodes_replay_identically(sb):
    got = _all(sb)
    if os.environ.get("LIS_RECORD_LOOP_EPISODES") == "1":
        FIXTURE.parent.mkdir(exist_ok=True)
        FIXTURE.write_text(json.dumps(got, indent=1, ensure_ascii=True, sort_keys=True) + "\n")
        pytest.skip(f"recorded {FIXTURE}")
    want = json.loads(FIXTURE.read_text())
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name] == want[name], name
    assert {w["record"]["termination"] for w in want.values()} == {
        "submitted", "max_turns", "token_budget", "timeout", "model_error", "model_timeout", "sandbox_error", "interrupted"}

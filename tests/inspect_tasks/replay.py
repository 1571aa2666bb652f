"""A replaying model for the Inspect-task tests: per task, a script of assistant turns.

The same scripts drive ``lis eval run`` (lis's OpenAI backend) and ``inspect eval`` (Inspect's
``openai-api`` provider) through one real OpenAI-compatible server (lis.models.server.ChatServer).
The model finds the task by its problem statement in the first user message and the turn by the
number of assistant messages so far, so the replies do not depend on which episode asks first.
Usage is counted from the messages' text (characters / 4), the same whichever client sent them.
"""
from __future__ import annotations

import copy
import json
import threading
import time
from typing import Any

from lis.models.base import ChatResult, ModelError, Usage
from lis.models.scripted import assistant, tool_call


def _text(messages: list[dict[str, Any]]) -> str:
    return "".join(str(m.get("content") or "") if isinstance(m.get("content"), (str, type(None)))
                   else json.dumps(m.get("content")) for m in messages)


class ReplayModel:
    """``chat()`` answers the scripted turn of the task whose marker is in the first user message.
    ``delay_s``: each reply takes this long (a model call in flight)."""

    def __init__(self, scripts: dict[str, list[dict[str, Any]]], name: str = "replay", delay_s: float = 0.0):
        self.name = name
        self.scripts = scripts
        self.delay_s = delay_s
        self._lock = threading.Lock()
        self.calls: list[tuple[str, int, list[dict[str, Any]]]] = []

    def chat(self, messages, tools=None, sampling=None) -> ChatResult:
        t0 = time.perf_counter()
        first = next((m for m in messages if m.get("role") == "user"), {})
        marker = next((k for k in self.scripts if k in str(first.get("content") or "")), None)
        if marker is None:
            raise ModelError("replay: no script for this conversation")
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        script = self.scripts[marker]
        msg = copy.deepcopy(script[min(turn, len(script) - 1)])
        with self._lock:
            self.calls.append((marker, turn, copy.deepcopy(messages)))
        if self.delay_s:
            time.sleep(self.delay_s)
        finish = "tool_calls" if msg.get("tool_calls") else "stop"
        usage = Usage(len(_text(messages)) // 4, len(json.dumps(msg)) // 4, 0)
        return ChatResult(message=msg, usage=usage, latency_s=time.perf_counter() - t0, finish_reason=finish)


def bash(command: str, call_id: str) -> dict[str, Any]:
    return tool_call("execute_bash", {"command": command}, call_id)


def equivalence_scripts(tasks) -> dict[str, list[dict[str, Any]]]:
    """Three tasks, three ways of working (keyed by the first 60 characters of each problem):

    1. the shell: state carried across calls (cd, an exported variable), a nonzero exit code, the
       right answer written by a command, then submit;
    2. the editor: create a file (a wrong answer), view it, str_replace in it, a turn with no tool
       call (the reminder), then submit;
    3. a tool call written as ``<tool_call>`` text, two calls in one turn (one to an unknown tool),
       a call without its argument, and the turn budget running out (no submit).
    """
    a, b, c = tasks[:3]
    return {
        a.problem_statement[:60]: [
            assistant(None, bash("cd /testbed/documents && export LIS_X=41 && pwd", "a0")),
            assistant("Checking state.", bash("pwd; echo $((LIS_X + 1)); ls /nonexistent", "a1")),
            assistant(None, bash(f"printf '%s' '{a.ground_truth}' > /testbed/answer.txt && cat /testbed/answer.txt",
                                 "a2")),
            assistant(None, tool_call("submit", {}, "a3")),
        ],
        b.problem_statement[:60]: [
            assistant(None, tool_call("str_replace_editor", {"command": "create", "path": "/testbed/answer.txt",
                                                             "file_text": "7\n"}, "b0")),
            assistant(None, tool_call("str_replace_editor", {"command": "view", "path": "/testbed/answer.txt"}, "b1"),
                      tool_call("str_replace_editor", {"command": "str_replace", "path": "/testbed/answer.txt",
                                                       "old_str": "7", "new_str": "8"}, "b2")),
            assistant("I think the answer file is ready."),
            assistant(None, tool_call("submit", {}, "b3")),
        ],
        c.problem_statement[:60]: [
            assistant("Let me write it.\n<tool_call>" + json.dumps(
                {"name": "execute_bash", "arguments": {"command": f"echo '\\boxed{{{c.ground_truth}}}' > "
                                                                  "/testbed/answer.txt; wc -c /testbed/answer.txt"}})
                      + "</tool_call>"),
            assistant(None, bash("cat /testbed/answer.txt; exit 3", "c1"), tool_call("browse", {"url": "x"}, "c2")),
            assistant(None, tool_call("execute_bash", {}, "c3")),
            assistant(None, bash("seq 1 200", "c4")),
        ],
    }

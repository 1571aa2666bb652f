"""A scripted ``mockllm/model`` for the lis Inspect tasks: it knows each task's answer.

Sandbox modes: list the documents and write the answer to the answer file (one ``execute_bash``),
then ``submit``. Vanilla: reply with the answer in the form the domain's scorer reads. Usage is
given on every output (mockllm would otherwise count tokens with tiktoken, which downloads its
encoding: offline, that fails).
"""
from __future__ import annotations

import shlex

from inspect_ai.model import ChatMessageTool, ChatMessageUser, ModelOutput, ModelUsage

from lis.tasks.schema import Task

MODEL = "mockllm/model"


def reply_for(task: Task) -> str:
    """The answer text a correct model gives for ``task`` (what the domain's scorer reads)."""
    d = task.domain
    if d in ("math", "physics"):
        return f"\\boxed{{{task.ground_truth}}}"
    if d == "instruct_follow":
        return "Here is my answer."
    return task.ground_truth


class Oracle:
    """``mockllm/model``'s ``custom_outputs``: the task is found by its problem statement in the first
    user message; ``answers`` maps a task id to the text to answer instead of the right one."""

    def __init__(self, tasks: list[Task], answers: dict[str, str] | None = None):
        self.tasks = tasks
        self.answers = answers or {}
        self.seeds: list[int | None] = []

    def _task(self, messages) -> Task:
        first = next(m for m in messages if isinstance(m, ChatMessageUser)).text
        found = [t for t in self.tasks if t.problem_statement in first]  # tasks of one context share a prefix
        return max(found, key=lambda t: len(t.problem_statement))

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        task = self._task(messages)
        self.seeds.append(config.seed)
        answer = self.answers.get(task.id, reply_for(task))
        done = sum(isinstance(m, ChatMessageTool) for m in messages)
        if not tools:
            out = ModelOutput.from_content(MODEL, answer)
        elif done == 0:
            command = f"ls /testbed/documents | head -3; printf '%s' {shlex.quote(answer)} > /testbed/answer.txt"
            out = ModelOutput.for_tool_call(MODEL, "execute_bash", {"command": command})
        else:
            out = ModelOutput.for_tool_call(MODEL, "submit", {})
        out.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
        return out


def judge(verdict: str = "CORRECT"):
    """A judge role model's outputs: always ``verdict``."""
    def reply(messages, tools, tool_choice, config) -> ModelOutput:
        out = ModelOutput.from_content(MODEL, verdict)
        out.usage = ModelUsage(input_tokens=50, output_tokens=1, total_tokens=51)
        return out
    return reply

"""A small Inspect task run end to end, offline, in ``lis`` sandboxes (tests/inspect_provider/test_eval.py):

    inspect eval tests/inspect_provider/offline_task.py --sandbox lis:docker --log-dir LOGS   # or lis:bwrap

Three AIME 2025 problems from data/samples, Inspect's own ``bash()`` and ``python()`` tools, and
``mockllm/model`` scripted to call them for real: bash reports who runs it and counts the words of
the problem file Inspect copied in; python writes /testbed/answer.txt; the scorer reads that file
back through the sandbox. What the log then shows could only come from a lis sandbox (the user
``sandbox``, uid 1000, the working folder /testbed)."""
from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import TaskState, generate, use_tools
from inspect_ai.tool import bash, python
from inspect_ai.util import sandbox

SAMPLES = Path(__file__).resolve().parents[2] / "data/samples/aime25/aime25_test.jsonl"

BASH = "whoami; id -u; pwd; wc -w < problem.txt"
PYTHON = ("import os\n"
          "words = len(open('problem.txt').read().split())\n"
          "text = f'{words} words, uid {os.getuid()}'\n"
          "open('/testbed/answer.txt', 'w').write(text)\n"
          "print(text)\n")


def script(messages, tools, tool_choice, config) -> ModelOutput:
    """The mock model's turns: bash, then python, then a final answer."""
    done = sum(isinstance(m, ChatMessageTool) for m in messages)
    if done == 0:
        out = ModelOutput.for_tool_call("mockllm/model", "bash", {"command": BASH})
    elif done == 1:
        out = ModelOutput.for_tool_call("mockllm/model", "python", {"code": PYTHON})
    else:
        out = ModelOutput.from_content("mockllm/model", "I wrote /testbed/answer.txt.")
    # usage given: mockllm would otherwise count tokens with tiktoken, which downloads its encoding (offline: fails)
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


@scorer(metrics=[accuracy()])
def answer_file():
    """Correct when /testbed/answer.txt (read back through the sandbox) has the word count of the
    problem and the sandbox user's uid, 1000."""

    async def score(state: TaskState, target: Target) -> Score:
        text = await sandbox().read_file("answer.txt")
        want = f"{len(state.metadata['problem'].split())} words, uid 1000"
        return Score(value=CORRECT if text == want else INCORRECT, answer=text, explanation=f"want {want!r}")

    return score


@task
def lis_offline(n: int = 3) -> Task:
    rows = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()[:n]]
    dataset = [Sample(id=r["id"], input=f"Solve: {r['problem']}", target=str(r["answer"]),
                      files={"problem.txt": r["problem"]}, metadata={"problem": r["problem"]}) for r in rows]
    return Task(dataset=dataset, solver=[use_tools(bash(timeout=60), python(timeout=60)), generate()],
                scorer=answer_file(), model=get_model("mockllm/model", custom_outputs=script),
                message_limit=10)

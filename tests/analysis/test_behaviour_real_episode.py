"""The classifier on an episode made by our agent loop in the real sandbox (a scripted model):
the record's tool names and arguments are what the classifier reads, and the scripts it follows
really ran."""
from __future__ import annotations

import pytest

from lis.agent import AgentConfig, Trajectory, run_episode
from lis.analysis.behaviour import classify_episode
from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.sandbox import make_sandbox

pytestmark = pytest.mark.docker


@pytest.fixture
def sb(base_config):
    box = make_sandbox(base_config).start()
    yield box
    box.close()


def bash(cmd):
    return tool_call("execute_bash", {"command": cmd})


SOLVE = ("import itertools\n"
         "with open('/testbed/documents/words.txt') as f:\n"
         "    words = f.read().split()\n"
         "print(sum(1 for p in itertools.permutations(words) if p[0] < p[-1]))\n")


def test_real_episode_verdicts(sb):
    replies = [
        assistant("Set up the input.", bash("mkdir -p /testbed/documents && printf 'b a c\\n' > /testbed/documents/words.txt "
                                            "&& ls /testbed/documents")),
        assistant(None, tool_call("str_replace_editor", {"command": "create", "path": "/testbed/solve.py",
                                                         "file_text": SOLVE})),
        assistant(None, bash("cd /testbed && python3 solve.py")),
        assistant(None, bash("cat > /testbed/count.sh <<'EOF'\n#!/bin/bash\nwc -w /testbed/documents/words.txt\nEOF\n"
                             "bash /testbed/count.sh")),
        assistant(None, tool_call("str_replace_editor", {"command": "view", "path": "/testbed/documents/words.txt"}),
                  bash("echo 3 > /testbed/answer.txt")),
        assistant("done", tool_call("submit", {})),
    ]
    rec = Trajectory(task_id="real", model="scripted", mode="sandbox", domain="math")
    run_episode(ScriptedModel(replies), sb, [{"role": "system", "content": "sys"}, {"role": "user", "content": "Go."}],
                AgentConfig(), rec)
    assert rec.termination == "submitted" and rec.answer == "3"
    assert rec.steps[2].calls[0].observation.rstrip().endswith("3")        # the script ran: 3 of 6 permutations
    assert "3 /testbed/documents/words.txt" in rec.steps[3].calls[0].observation
    v = classify_episode(Trajectory.from_dict(rec.to_dict()))              # as read back from JSONL
    assert [t.capabilities for t in v.per_turn] == [("file",), (), ("file", "compute"), ("file", "compute"), ("file",), ()]
    assert v.per_turn[2].followed == ("/testbed/solve.py",) and set(v.per_turn[2].rules) == {"run-interpreter", "open", "itertools"}
    assert v.per_turn[3].followed == ("/testbed/count.sh",) and v.per_turn[3].rules == ("run-script-file", "shell-read")
    assert v.per_turn[4].calls == 2 and v.per_turn[4].rules == ("editor-view",)

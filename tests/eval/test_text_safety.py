"""`lis eval run` against a real OpenAI-compatible server whose replies carry lone surrogates (valid
JSON): in sandbox mode the episode runs to its end (it used to become an ``error`` with 0 steps), in
vanilla mode the job finishes and finishes again when re-run (it used to crash on every run); the
records count what was replaced (``invalid_text``)."""
from __future__ import annotations

import json

import pytest

from lis.models.scripted import ScriptedModel
from lis.models.server import ChatServer
from tests.eval.test_runner import add_model, lis, metrics, records
from tests.surrogates import FFFD, S, SANDBOX_INVALID, sandbox_replies

pytestmark = pytest.mark.docker


def test_sandbox_mode_runs_the_episode_to_its_end(repo_copy, image_tag):
    lis(repo_copy, "tasks", "--domain", "math", "--limit", "1", "--profile", "ci", "--out", "data/tasks/math.jsonl")
    with ChatServer(ScriptedModel(sandbox_replies(), name="agent")) as srv:
        add_model(repo_copy, "agent", srv.base_url, eval={"workers": 1, "repeats": {"math": 1}})
        r = lis(repo_copy, "eval", "run", "--model", "agent", "--domain", "math", "--mode", "sandbox",
                "--profile", "ci", check=False)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    (rec,) = records(repo_copy, "agent", "math", "sandbox")
    assert rec["termination"] == "submitted" and rec["answer"] == "42", rec.get("error")
    assert len(rec["steps"]) == 4 and rec["invalid_text"] == SANDBOX_INVALID
    assert rec["steps"][2]["calls"][0]["arguments"] == {"command": "echo keys", f"ti{FFFD}meout": 5}
    assert metrics(repo_copy, "agent", "math", "sandbox")["errors"] == 0


def test_vanilla_mode_finishes_and_finishes_again(repo_copy):
    # one task and the same reply every time: a request retried under load (a slow machine) cannot hand one
    # task's answer to another
    lis(repo_copy, "tasks", "--domain", "math", "--limit", "1", "--profile", "ci", "--out", "data/tasks/math.jsonl")
    tasks = [json.loads(x) for x in (repo_copy / "data/tasks/math.jsonl").read_text().splitlines()]
    replies = [f"The answer is \\boxed{{{tasks[0]['ground_truth']}}}{S}"] * 8
    with ChatServer(ScriptedModel(replies, name="answerer")) as srv:
        add_model(repo_copy, "answerer", srv.base_url, eval={"workers": 1})
        args = ("eval", "run", "--model", "answerer", "--domain", "math", "--mode", "vanilla", "--profile", "ci")
        first = lis(repo_copy, *args, check=False)
        again = lis(repo_copy, *args, check=False)  # resumes from the journal: nothing to run, outputs rewritten
    for r in (first, again):
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    recs = records(repo_copy, "answerer", "math", "vanilla")
    assert [r["termination"] for r in recs] == ["answered"] * len(tasks)
    assert all(r["invalid_text"] == 1 and r["answer"].endswith(FFFD) for r in recs)
    m = metrics(repo_copy, "answerer", "math", "vanilla")
    assert m["errors"] == 0 and m["accuracy"] == 1.0

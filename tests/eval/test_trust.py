"""Results users can trust: errors are not wrong answers, scores follow the scorer, Ctrl-C stops
everything at once, one run per job. Real HTTP servers, real sandboxes, the real `lis` command."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid

import pytest

from lis.models.base import ChatResult, ModelError, Usage
from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.models.server import ChatServer
from tests.conftest import BIN, run
from tests.eval.test_runner import add_model, lis, metrics, records

pytestmark = pytest.mark.docker


def env_for(run_id: str, repo=None) -> dict:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "LIS_RUN_ID": run_id, "HF_HUB_OFFLINE": "1"}
    if repo is not None:  # the repository copy's own code (edited by the test) is what runs
        env["PYTHONPATH"] = str(repo)
    return env


def journal_rows(repo, model, domain="math", mode="vanilla"):
    path = repo / f"data/journal/{model}/{domain}/{mode}.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


class Flaky:
    """Answers every problem with the right boxed answer, except those named in ``fail``, whose
    requests fail with a server error (an infrastructure failure, not a wrong answer)."""

    def __init__(self, answers: dict[str, str], fail: set[str], name="flaky", latency_s=0.0):
        self.name, self.answers, self.fail, self.latency_s = name, answers, fail, latency_s

    def chat(self, messages, tools=None, sampling=None):
        text = messages[-1]["content"]
        key = next(k for k in self.answers if k in text)
        if self.latency_s:
            time.sleep(self.latency_s)
        if key in self.fail:
            raise ModelError("injected server failure")
        return ChatResult({"role": "assistant", "content": f"\\boxed{{{self.answers[key]}}}"}, Usage(10, 5, 0), 0.01,
                          "stop")


def math_tasks(repo, n):
    lis(repo, "tasks", "--domain", "math", "--limit", str(n), "--out", "data/tasks/math.jsonl")
    return [json.loads(x) for x in (repo / "data/tasks/math.jsonl").read_text().splitlines()]


# -- errors are not wrong answers -------------------------------------------------------------------
def test_errors_are_excluded_from_accuracy_retried_and_bounded(repo_copy):
    tasks = math_tasks(repo_copy, 4)
    answers = {t["problem_statement"][:60]: t["ground_truth"] for t in tasks}
    failing = {tasks[0]["problem_statement"][:60]}
    model = Flaky(answers, failing)
    args = ("eval", "run", "--model", "flaky", "--domain", "math", "--mode", "vanilla", "--profile", "ci")
    with ChatServer(model) as srv:
        add_model(repo_copy, "flaky", srv.base_url, eval={"max_error_share": 0.5, "max_attempts": 2,
                                                          "repeats": {"math": 1}})
        lis(repo_copy, *args)
        m = metrics(repo_copy, "flaky", "math", "vanilla")
        # 3 right answers and one server failure: accuracy 1.0 over 3, not 0.75 over 4
        assert m["accuracy"] == 1.0 and m["scored"] == 3 and m["errors"] == 1 and m["n"] == 4
        assert m["error_kinds"] == {"model_error": 1} and m["error_share"] == 0.25
        asked = len(srv.requests)
        r = lis(repo_copy, *args)  # the error is retried (attempt 2), the finished ones are not
        assert "1 to retry after errors" in r.stderr
        assert len(srv.requests) - asked == 2  # one episode, two HTTP attempts (max_retries 1)
        asked = len(srv.requests)
        r = lis(repo_copy, *args)  # tried max_attempts times: given up, counted, not asked again
        assert "1 given up after 2 attempts" in r.stderr and len(srv.requests) == asked
        assert metrics(repo_copy, "flaky", "math", "vanilla")["errors"] == 1
        attempts = [x["attempt"] for x in journal_rows(repo_copy, "flaky") if x["termination"] == "model_error"]
        assert attempts == [1, 2]
        model.fail = set()  # the server is fixed; the threshold is tightened: the job must not publish 0.75
        add_model(repo_copy, "flaky", srv.base_url, eval={"max_error_share": 0.1, "max_attempts": 3,
                                                          "repeats": {"math": 1}})
        lis(repo_copy, *args)  # attempt 3 succeeds
    m = metrics(repo_copy, "flaky", "math", "vanilla")
    assert m["accuracy"] == 1.0 and m["errors"] == 0 and m["scored"] == 4


def test_harness_exception_is_an_error_and_is_retried(repo_copy):
    """A task the harness cannot run (here: a document name the sandbox's file system refuses, a
    component over NAME_MAX) is an `error` record, never journalled as finished, retried on the
    next run."""
    math_tasks(repo_copy, 1)
    path = repo_copy / "data/tasks/math.jsonl"
    row = json.loads(path.read_text())
    row["input_files"] = {"a" * 300 + ".txt": "x"}
    path.write_text(json.dumps(row) + "\n")
    with ChatServer(ScriptedModel([assistant("x", tool_call("submit", {}))] * 4, name="m")) as srv:
        add_model(repo_copy, "m", srv.base_url, eval={"max_error_share": 1.0, "repeats": {"math": 1}})
        args = ("eval", "run", "--model", "m", "--domain", "math", "--mode", "sandbox", "--profile", "ci")
        lis(repo_copy, *args)
        rows = journal_rows(repo_copy, "m", mode="sandbox")
        assert [r["termination"] for r in rows] in (["error"], ["sandbox_error"])
        assert rows[0]["reward"] is None
        r = lis(repo_copy, *args)
        assert "1 to retry after errors" in r.stderr and len(journal_rows(repo_copy, "m", mode="sandbox")) == 2


# -- scores follow the scorer -----------------------------------------------------------------------
def test_editing_a_scorer_rescores_without_running_episodes_and_editing_the_agent_reruns(repo_copy):
    tasks = math_tasks(repo_copy, 3)
    answers = {t["problem_statement"][:60]: t["ground_truth"] for t in tasks}
    args = ["lis", "eval", "run", "--model", "flaky", "--domain", "math", "--mode", "vanilla", "--profile", "ci"]
    env = env_for("pytest-rescore", repo_copy)
    with ChatServer(Flaky(answers, set())) as srv:
        add_model(repo_copy, "flaky", srv.base_url, eval={"repeats": {"math": 1}})
        run(args, cwd=repo_copy, env=env)
        assert len(srv.requests) == 3 and metrics(repo_copy, "flaky", "math", "vanilla")["accuracy"] == 1.0
        # a "fix" to the math scorer: every answer is now wrong
        route = repo_copy / "lis/rewards/route.py"
        text = route.read_text()
        assert "        return score_math(answer, gold)\n" in text
        route.write_text(text.replace("        return score_math(answer, gold)\n",
                                      "        s = score_math(answer, gold)\n"
                                      "        return Score(1.0 - s.value, s.scorer, s.extracted, s.details)\n"))
        r = run(args, cwd=repo_copy, env=env)
        assert "3 already done" in r.stderr and "scoring 3 episode(s)" in r.stderr
        assert len(srv.requests) == 3  # not one model call
        m = metrics(repo_copy, "flaky", "math", "vanilla")
        assert m["accuracy"] == 0.0 and m["scored"] == 3
        # a comment or docstring is not a change of the scorer
        route.write_text(route.read_text().replace('"""One entry point', '"""(reworded) One entry point'))
        r = run(args, cwd=repo_copy, env=env)
        assert "scoring" not in r.stderr and len(srv.requests) == 3
        # a change to how episodes run re-runs them
        episode = repo_copy / "lis/agent/episode.py"
        episode.write_text(episode.read_text().replace("    t0 = time.monotonic()\n    try:\n        cancel.check()",
                                                       "    t0 = time.monotonic()\n    _changed = True\n    try:\n"
                                                       "        cancel.check()", 1))
        r = run(args, cwd=repo_copy, env=env)
        assert "0 already done" in r.stderr and len(srv.requests) == 6


def test_changing_scoring_params_rescores_without_running_episodes(repo_copy):
    lis(repo_copy, "tasks", "--domain", "long_context", "--limit", "1", "--out", "data/tasks/long_context.jsonl")
    answerer = ScriptedModel([assistant("It is about markets.")] * 3, name="answerer")
    judge = ScriptedModel([assistant("CORRECT")] * 4, name="judge")
    args = ("eval", "run", "--model", "answerer", "--domain", "long_context", "--mode", "vanilla", "--profile", "ci")
    with ChatServer(answerer) as a, ChatServer(judge) as j:
        add_model(repo_copy, "answerer", a.base_url)
        lis(repo_copy, *args)
        rule = records(repo_copy, "answerer", "long_context", "vanilla")[0]
        assert rule["score"]["scorer"] in ("rouge_l", "exact_match")
        add_model(repo_copy, "judge", j.base_url, scoring={"judge": {"model": "judge", "repeats": 2}})
        lis(repo_copy, *args)
        judged = records(repo_copy, "answerer", "long_context", "vanilla")[0]
        assert judged["score"]["scorer"] == "judge:judge" and judged["reward"] == 1.0
        assert len(a.requests) == 1 and len(j.requests) == 2  # the episode ran once, the judge was asked
        assert judged["episode_id"] == rule["episode_id"]


# -- Ctrl-C -----------------------------------------------------------------------------------------
class Busy:
    """An agent that keeps the sandbox busy: every turn runs `sleep 2`; each call takes ``latency_s``."""

    def __init__(self, latency_s=0.3, name="busy"):
        self.name, self.latency_s, self.n = name, latency_s, 0

    def chat(self, messages, tools=None, sampling=None):
        time.sleep(self.latency_s)
        self.n += 1
        return ChatResult({"role": "assistant", "content": None,
                           "tool_calls": [tool_call("execute_bash", {"command": "sleep 2"}, f"c{self.n}")]},
                          Usage(10, 5, 0), self.latency_s, "tool_calls")


def _containers(client, run_id):
    """Our containers of ``run_id`` (one API call: no per-container inspect that races their removal)."""
    return client.api.containers(all=True, filters={"label": [f"lis.run={run_id}"]})


def _start(repo, run_id, *args):
    return subprocess.Popen(["lis", "eval", "run", *args], cwd=repo, env=env_for(run_id),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_ctrl_c_starts_nothing_new_records_interrupted_and_exits_promptly(repo_copy, docker_client, image_tag):
    math_tasks(repo_copy, 6)
    run_id = "pytest-sigint-" + uuid.uuid4().hex[:6]
    with ChatServer(Busy()) as srv:
        add_model(repo_copy, "busy", srv.base_url, eval={"repeats": {"math": 1}, "workers": 2})
        proc = _start(repo_copy, run_id, "--model", "busy", "--domain", "math", "--mode", "sandbox", "--profile", "ci")
        deadline = time.monotonic() + 120
        while len(_containers(docker_client, run_id)) < 2 or len(srv.requests) < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run did not get going"
            time.sleep(0.1)
        t_sig = time.time()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.time() - t_sig
        late = [t for t in srv.request_times if t > t_sig + 0.3]
    assert proc.returncode == 130, err
    assert took < 5, f"exit took {took:.1f}s"
    assert not late, f"{len(late)} model call(s) after the signal"
    assert not _containers(docker_client, run_id), "a sandbox survived Ctrl-C"
    assert "Traceback" not in err and "recorded as interrupted" in err
    rows = journal_rows(repo_copy, "busy", mode="sandbox")
    assert rows and {r["termination"] for r in rows} == {"interrupted"}  # nothing journalled as finished
    # the next run runs them (the agent now submits at once)
    with ChatServer(ScriptedModel([assistant("done", tool_call("submit", {}))] * 6, name="busy")) as srv:
        add_model(repo_copy, "busy", srv.base_url, eval={"repeats": {"math": 1}, "workers": 2})
        r = lis(repo_copy, "eval", "run", "--model", "busy", "--domain", "math", "--mode", "sandbox", "--profile", "ci")
        assert "0 already done" in r.stderr and len(srv.requests) == 6


@pytest.mark.slow
def test_second_ctrl_c_exits_at_once_and_still_removes_sandboxes(repo_copy, docker_client, image_tag):
    math_tasks(repo_copy, 2)
    run_id = "pytest-sigint2-" + uuid.uuid4().hex[:6]
    with ChatServer(Busy(latency_s=60)) as srv:  # the model hangs: a worker is stuck in its call
        add_model(repo_copy, "busy", srv.base_url, eval={"repeats": {"math": 1}, "workers": 2})
        proc = _start(repo_copy, run_id, "--model", "busy", "--domain", "math", "--mode", "sandbox", "--profile", "ci")
        deadline = time.monotonic() + 120
        while len(srv.requests) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.1)
        t_sig = time.time()
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
        took = time.time() - t_sig
    assert proc.returncode == 130 and took < 2, f"exit {proc.returncode} after {took:.1f}s"
    assert not _containers(docker_client, run_id)


@pytest.mark.slow
def test_ctrl_c_with_a_hanging_model_call_exits_within_seconds(repo_copy):
    math_tasks(repo_copy, 2)
    with ChatServer(Flaky({"": "1"}, set(), latency_s=60)) as srv:
        add_model(repo_copy, "hang", srv.base_url, eval={"repeats": {"math": 1}})
        proc = _start(repo_copy, "pytest-hang", "--model", "hang", "--domain", "math", "--mode", "vanilla",
                      "--profile", "ci")
        while len(srv.requests) < 2:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        t_sig = time.time()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
        took = time.time() - t_sig
    assert proc.returncode == 130 and took < 5, f"exit {proc.returncode} after {took:.1f}s"
    assert [r["termination"] for r in journal_rows(repo_copy, "hang")] == ["interrupted", "interrupted"]


# -- one run per job ---------------------------------------------------------------------------------
def test_a_second_run_of_the_same_job_refuses_or_waits(repo_copy):
    tasks = math_tasks(repo_copy, 4)
    answers = {t["problem_statement"][:60]: t["ground_truth"] for t in tasks}
    with ChatServer(Flaky(answers, set(), latency_s=0.7)) as srv:
        add_model(repo_copy, "slow", srv.base_url, eval={"repeats": {"math": 1}, "workers": 1})
        args = ("--model", "slow", "--domain", "math", "--mode", "vanilla", "--profile", "ci")
        first = _start(repo_copy, "pytest-lock1", *args)
        while not srv.requests:
            assert first.poll() is None, first.communicate()
            time.sleep(0.05)
        second = lis(repo_copy, "eval", "run", *args, check=False)
        assert second.returncode == 2 and "Traceback" not in second.stderr
        assert f"job slow/math/vanilla is already being run by process {first.pid}" in second.stderr
        assert "--wait" in second.stderr
        waited = lis(repo_copy, "eval", "run", *args, "--wait")
        assert first.wait(timeout=60) == 0
        assert "being run by" in waited.stderr and "4 already done" in waited.stderr
        assert len(srv.requests) == 4
    assert len(journal_rows(repo_copy, "slow")) == 4  # every task once, not twice

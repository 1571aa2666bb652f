"""The evaluation runner against a real OpenAI-compatible HTTP server (a scripted model behind it),
in a fresh copy of the repository: scores, metrics, resume after SIGKILL, bad items, sandbox mode."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
import yaml

from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.models.server import ChatServer
from tests.conftest import BIN, run

pytestmark = pytest.mark.docker


def add_model(repo, name: str, base_url: str, **params_edits):
    path = repo / "params.yaml"
    data = yaml.safe_load(path.read_text())
    data["models"][name] = {"backend": "openai", "model": name, "base_url": base_url, "api_key_env": "NONE_KEY",
                            "max_retries": 1, "backoff_s": 0.01, "timeout_s": 30,
                            "sampling": {"temperature": 0.0, "max_tokens": 256}}
    for section, values in params_edits.items():
        data[section].update(values)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def lis(repo, *args, check=True):
    return run(["lis", *args], cwd=repo, check=check, env={"LIS_RUN_ID": "pytest-eval"})


def records(repo, name, domain, mode):
    lines = (repo / f"data/eval/{name}/{domain}/{mode}/trajectories.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines]


def metrics(repo, name, domain, mode):
    return json.loads((repo / f"data/eval/{name}/{domain}/{mode}/metrics.json").read_text())


def test_vanilla_scores_and_metrics(repo_copy):
    lis(repo_copy, "tasks", "--domain", "math", "--profile", "ci", "--out", "data/tasks/math.jsonl")
    tasks = [json.loads(x) for x in (repo_copy / "data/tasks/math.jsonl").read_text().splitlines()]
    answers = [f"The answer is \\boxed{{{t['ground_truth']}}}." for t in tasks]
    answers[0] = "I think it is \\boxed{-1}."  # one wrong
    by_problem = {t["problem_statement"][:80]: a for t, a in zip(tasks, answers)}

    class ByProblem(ScriptedModel):
        def chat(self, messages, tools=None, sampling=None):
            text = messages[-1]["content"]
            reply = next(a for p, a in by_problem.items() if p in text)
            self._replies = [assistant(reply)]
            self._i = 0
            return super().chat(messages, tools, sampling)

    with ChatServer(ByProblem([], name="server-model")) as srv:
        add_model(repo_copy, "served", srv.base_url)
        lis(repo_copy, "eval", "run", "--model", "served", "--domain", "math", "--mode", "vanilla", "--profile", "ci")
    m = metrics(repo_copy, "served", "math", "vanilla")
    assert m["n"] == len(tasks) and m["errors"] == 0 and m["scorers"] == {"math_verify": len(tasks)}
    assert m["accuracy"] == pytest.approx((len(tasks) - 1) / len(tasks))
    assert m["tokens"]["prompt"] > 0 and m["ci95"][0] <= m["accuracy"] <= m["ci95"][1]
    recs = records(repo_copy, "served", "math", "vanilla")
    assert [r["task_id"] for r in recs] == sorted(r["task_id"] for r in recs)
    assert all(r["termination"] == "answered" and r["steps"][0]["llm_latency_s"] > 0 for r in recs)


def test_killed_run_resumes_without_repeating_finished_episodes(repo_copy):
    lis(repo_copy, "tasks", "--domain", "math", "--limit", "8", "--out", "data/tasks/math.jsonl")
    model = ScriptedModel([assistant("\\boxed{1}")] * 100, name="slow", latency_s=0.7)
    with ChatServer(model) as srv:
        add_model(repo_copy, "slow", srv.base_url, eval={"workers": 1, "repeats": {"math": 1}})
        env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "LIS_RUN_ID": "pytest-eval"}
        proc = subprocess.Popen(["lis", "eval", "run", "--model", "slow", "--domain", "math", "--mode", "vanilla",
                                 "--workers", "1"],
                                cwd=repo_copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        journal = repo_copy / "data/journal/slow/math/vanilla.jsonl"
        deadline = time.monotonic() + 60
        while not (journal.exists() and len(journal.read_text().splitlines()) >= 3):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        done_before = len(journal.read_text().splitlines())
        assert 3 <= done_before < 8
        r = lis(repo_copy, "eval", "run", "--model", "slow", "--domain", "math", "--mode", "vanilla", "--workers", "1")
        assert f"{done_before} already done" in r.stderr
        # every episode asked the model exactly once: the rerun repeated none of the finished ones
        # (at most one request was in flight when the first run was killed)
        assert len(srv.requests) in (8, 9)
    m = metrics(repo_copy, "slow", "math", "vanilla")
    assert m["n"] == 8 and m["errors"] == 0
    again = lis(repo_copy, "eval", "run", "--model", "slow", "--domain", "math", "--mode", "vanilla")
    assert "8 already done" in again.stderr  # a third run asks nothing (the server is gone)


def test_a_bad_item_is_recorded_and_the_run_goes_on(repo_copy):
    lis(repo_copy, "tasks", "--domain", "math", "--limit", "2", "--out", "data/tasks/math.jsonl")
    path = repo_copy / "data/tasks/math.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows.append({**rows[0], "id": "broken", "domain": "cooking"})  # a task of another domain in the math file
    rows.append({"id": "torn", "domain": "math"})  # not a task at all
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ChatServer(ScriptedModel([assistant("\\boxed{1}")] * 10, name="m")) as srv:
        add_model(repo_copy, "m", srv.base_url)
        args = ("eval", "run", "--model", "m", "--domain", "math", "--mode", "vanilla", "--profile", "ci")
        r = lis(repo_copy, *args, check=False)  # half the items are errors: far above eval.max_error_share
        assert r.returncode == 2 and "2 of 4 episodes are errors (error 2)" in r.stderr
        assert "no accuracy published" in r.stderr and "Traceback" not in r.stderr
        assert not (repo_copy / "data/eval/m/math/vanilla/metrics.json").exists()
        add_model(repo_copy, "m", srv.base_url, eval={"max_error_share": 1.0})
        lis(repo_copy, *args)
        assert len(srv.requests) == 2  # the finished episodes were not asked again; bad rows never reach the model
    m = metrics(repo_copy, "m", "math", "vanilla")
    assert m["n"] == 4 and m["errors"] == 2 and m["scored"] == 2
    assert m["error_kinds"] == {"error": 2} and m["accuracy"] == 0.0
    recs = {r["task_id"]: r for r in records(repo_copy, "m", "math", "vanilla")}
    assert recs["broken"]["termination"] == "error" and "a cooking task in the math job" in recs["broken"]["error"]
    assert recs["torn"]["termination"] == "error" and "malformed task row" in recs["torn"]["error"]


def test_unreachable_server_is_an_error_per_episode_not_a_crash(repo_copy):
    lis(repo_copy, "tasks", "--domain", "math", "--limit", "2", "--out", "data/tasks/math.jsonl")
    add_model(repo_copy, "gone", "http://127.0.0.1:9/v1", eval={"max_error_share": 1.0})
    lis(repo_copy, "eval", "run", "--model", "gone", "--domain", "math", "--mode", "vanilla", "--profile", "ci")
    m = metrics(repo_copy, "gone", "math", "vanilla")
    assert m["terminations"] == {"model_error": 2} and m["errors"] == 2 and m["accuracy"] is None
    rec = records(repo_copy, "gone", "math", "vanilla")[0]
    assert "127.0.0.1:9" in rec["error"] and "\n" not in rec["error"] and rec["reward"] is None


def test_sandbox_mode_through_the_server(repo_copy, image_tag):
    lis(repo_copy, "tasks", "--domain", "long_context", "--limit", "1", "--out", "data/tasks/long_context.jsonl")
    steps = [assistant("Let me look.", tool_call("execute_bash", {"command": "ls /testbed/documents | wc -l"})),
             assistant(None, tool_call("execute_bash", {"command": "echo 'no idea' > /testbed/answer.txt"})),
             assistant("Done.", tool_call("submit", {}))]
    with ChatServer(ScriptedModel(steps, name="agent")) as srv:
        add_model(repo_copy, "agent", srv.base_url, eval={"workers": 1, "repeats": {"long_context": 1}})
        lis(repo_copy, "eval", "run", "--model", "agent", "--domain", "long_context", "--mode", "sandbox",
            "--profile", "ci")
        tools_sent = srv.requests[0]["tools"]
    assert [t["function"]["name"] for t in tools_sent] == ["str_replace_editor", "execute_bash", "submit"]
    rec = records(repo_copy, "agent", "long_context", "sandbox")[0]
    assert rec["termination"] == "submitted" and rec["answer"] == "no idea"
    assert rec["steps"][0]["calls"][0]["observation"].splitlines()[-1] == "4"  # the four documents are files
    assert rec["score"]["scorer"] in ("rouge_l", "exact_match") and rec["reward"] is not None
    assert rec["backend"] == "docker" and rec["image"] == image_tag and rec["env_s"] > 0


def test_llm_judge_from_params_scores_long_context(repo_copy):
    """scoring.judge names a models entry: the runner asks it (repeats, mean) and caches its replies."""
    lis(repo_copy, "tasks", "--domain", "long_context", "--limit", "1", "--out", "data/tasks/long_context.jsonl")
    answerer = ScriptedModel([assistant("It is about markets.")] * 5, name="answerer")
    judge = ScriptedModel([assistant("CORRECT"), assistant("INCORRECT"), assistant("CORRECT"), assistant("CORRECT")],
                          name="judge")
    with ChatServer(answerer) as a, ChatServer(judge) as j:
        add_model(repo_copy, "answerer", a.base_url)
        add_model(repo_copy, "judge", j.base_url, scoring={"judge": {"model": "judge", "repeats": 4}})
        lis(repo_copy, "eval", "run", "--model", "answerer", "--domain", "long_context", "--mode", "vanilla",
            "--profile", "ci")
        asked = len(j.requests)
    rec = records(repo_copy, "answerer", "long_context", "vanilla")[0]
    assert rec["score"]["scorer"] == "judge:judge" and rec["reward"] == 0.75 and asked == 4
    assert "markets" in j.requests[0]["messages"][0]["content"]
    assert (repo_copy / "data/judge_cache.jsonl").is_file()


def test_changed_weights_invalidate_the_journal(repo_copy, tmp_path):
    """The journal is keyed by the model's weights too: the same params entry over other weights
    re-runs every episode."""
    import shutil

    from tests.serving import tiny_model_dir

    lis(repo_copy, "tasks", "--domain", "math", "--limit", "1", "--out", "data/tasks/math.jsonl")
    model_dir = tmp_path / "tiny"
    shutil.copytree(tiny_model_dir(), model_dir)
    params = yaml.safe_load((repo_copy / "params.yaml").read_text())
    params["models"]["copy"] = {"backend": "local", "path": str(model_dir),
                                "sampling": {"temperature": 0.7, "max_tokens": 32}}
    params["jobs"]["external"] = ["copy"]
    (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    args = ("eval", "run", "--model", "copy", "--domain", "math", "--mode", "vanilla", "--profile", "ci")
    lis(repo_copy, *args)
    assert "1 already done" in lis(repo_copy, *args).stderr
    manifest = json.loads((model_dir / "manifest.json").read_text())
    manifest["weights_sha256"] = "0" * 64  # as if the weights had been rebuilt differently
    (model_dir / "manifest.json").write_text(json.dumps(manifest))
    assert "0 already done" in lis(repo_copy, *args).stderr

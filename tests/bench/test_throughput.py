"""Queries per minute: the computation on known timings, and `lis throughput` end to end on a tiny scale
(ci profile, 2 tasks, concurrency 2, real sandboxes, a scripted model behind a real HTTP server),
its Ctrl-C, and its one-line errors."""
from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import time
import uuid

import pytest
import yaml

from lis.bench.throughput import qpm, run_summary, summarize
from lis.params import load
from lis.errors import LisError
from lis.models.base import ChatResult, Usage
from lis.models.scripted import assistant, tool_call
from lis.models.server import ChatServer
from tests.conftest import BIN, ROOT, lis, run
from tests.wait import wait_until


def test_qpm_on_known_timings():
    assert qpm(10, 120.0) == 5.0 and qpm(3, 30.0) == 6.0
    assert qpm(0, 10.0) == 0.0 and qpm(5, 0.0) == 0.0
    eps = [{"termination": "submitted", "wall_s": 10.0, "turns": 2, "model_tokens": 100, "billed_tokens": 1000},
           {"termination": "max_turns", "wall_s": 20.0, "turns": 4, "model_tokens": 200, "billed_tokens": 3000},
           {"termination": "answered", "wall_s": 3.0, "turns": 1, "model_tokens": 300, "billed_tokens": 2000},
           {"termination": "model_error", "wall_s": 1.0, "turns": 0, "model_tokens": None, "billed_tokens": None}]
    r = run_summary("sandbox", 1, 0, eps, wall_s=30.0)
    assert (r["queries"], r["completed"], r["errors"], r["error_kinds"]) == (4, 3, 1, {"model_error": 1})
    assert r["qpm"] == 6.0                                    # 3 completed in half a minute
    assert r["output_tokens_per_s"] == 20.0 and r["tokens_per_s"] == 200.0   # 600 and 6000 tokens in 30 s
    assert r["episode_wall_s_mean"] == 11.0 and r["turns_mean"] == pytest.approx(7 / 3, abs=1e-3)
    eps[0]["model_tokens"] = None                             # one episode without usage: no tokens/s at all
    assert run_summary("sandbox", 1, 0, eps, wall_s=30.0)["tokens_per_s"] is None


def test_summary_ratio_is_paired_by_repeat():
    def r(mode, rep, q):
        return {"mode": mode, "repeat": rep, "qpm": q, "queries": 4, "completed": 4, "errors": 0,
                "tokens_per_s": 10.0 * q, "output_tokens_per_s": q}
    runs = [r("vanilla", 0, 10.0), r("sandbox", 0, 5.0), r("sandbox", 1, 6.0), r("vanilla", 1, 12.0),
            r("vanilla", 2, 14.0), r("sandbox", 2, 14.0)]
    s = summarize(runs, ["vanilla", "sandbox"])
    v = s["modes"]["vanilla"]["qpm"]
    assert v["mean"] == 12.0 and v["n"] == 3 and v["values"] == [10.0, 12.0, 14.0]
    assert v["ci95"] == pytest.approx([12 - 4.303 * 2 / 3 ** 0.5, 12 + 4.303 * 2 / 3 ** 0.5], abs=1e-3)
    ratio = s["ratios"]["sandbox/vanilla"]
    # geometric mean of 0.5, 0.5, 1.0 = 0.25^(1/3); the interval is a t-interval of the logarithms
    logs = [math.log(0.5), math.log(0.5), 0.0]
    m = sum(logs) / 3
    sd = (sum((x - m) ** 2 for x in logs) / 2) ** 0.5
    assert ratio["values"] == [0.5, 0.5, 1.0] and ratio["n"] == 3
    assert ratio["geomean"] == pytest.approx(0.25 ** (1 / 3), abs=1e-4)
    assert ratio["ci95"] == pytest.approx([math.exp(m - 4.303 * sd / 3 ** 0.5), math.exp(m + 4.303 * sd / 3 ** 0.5)],
                                          abs=1e-3)
    assert ratio["ratio_of_means"] == pytest.approx(25 / 3 / 12, abs=1e-4)
    assert s["modes"]["sandbox"]["tokens_per_s"]["mean"] == pytest.approx(250 / 3, abs=1e-3)
    # a rate's interval does not reach below 0 (three noisy repeats would take it there)
    noisy = summarize([r("vanilla", 0, 1.0), r("vanilla", 1, 1.0), r("vanilla", 2, 40.0)], ["vanilla"])
    assert noisy["modes"]["vanilla"]["qpm"]["ci95"][0] == 0.0 and noisy["ratios"] == {}


def test_settings_validation():
    """The command line's options over the section, validated with it; an absent section is the model's defaults."""
    p = load(ROOT, profile="smoke")
    s = p.settings("throughput", tasks=2, modes=["sandbox", "vanilla"], repeats=None)
    assert s.tasks == 2 and s.modes == ["sandbox", "vanilla"] and s.repeats == p.data["throughput"]["repeats"]
    bare = dataclasses.replace(p, data={k: v for k, v in p.data.items() if k != "throughput"})
    d = bare.settings("throughput", tasks=2)
    assert d.tasks == 2 and d.concurrency == 8 and d.warmup == 1  # the model's defaults
    for bad in ({"taks": 2}, {"tasks": 0}, {"modes": ["sandbox", "sandbox"]}, {"modes": ["docker"]},
                {"serve": "grpc"}, {"domains": []}, {"max_error_share": 2}, {"warmup": -1}):
        with pytest.raises(LisError) as e:
            bare.settings("throughput", **bad)
        assert "throughput" in str(e.value) and "\n" not in str(e.value)


class PerConversation:
    """Answers by the state of each conversation, so that concurrent episodes each follow their own
    script: without tools (vanilla) a boxed answer; with tools, write the answer file, then submit.
    Usage as the ScriptedModel counts it (JSON characters / 4): deterministic."""

    def __init__(self, name: str = "served", latency_s: float = 0.0):
        self.name, self.latency_s = name, latency_s

    def chat(self, messages, tools=None, sampling=None):
        t0 = time.perf_counter()
        turns = sum(1 for m in messages if m.get("role") == "assistant")
        if not tools:
            msg = assistant("The answer is \\boxed{1}.")
        elif turns == 0:
            msg = assistant(None, tool_call("execute_bash", {"command": "echo '\\boxed{1}' > /testbed/answer.txt"}))
        else:
            msg = assistant("Done.", tool_call("submit", {}))
        time.sleep(self.latency_s)
        usage = Usage(sum(len(json.dumps(m)) for m in messages) // 4, len(json.dumps(msg)) // 4, 0)
        return ChatResult(message=msg, usage=usage, latency_s=time.perf_counter() - t0,
                          finish_reason="tool_calls" if msg.get("tool_calls") else "stop")


def add_model(repo, name, base_url):
    path = repo / "params.yaml"
    data = yaml.safe_load(path.read_text())
    data["models"][name] = {"backend": "openai", "model": name, "base_url": base_url, "api_key_env": "NONE_KEY",
                            "max_retries": 1, "timeout_s": 60, "sampling": {"temperature": 0.0, "max_tokens": 64}}
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def leftovers(docker_client, run_id):
    return docker_client.containers.list(all=True, sparse=True, filters={"label": f"lis.run=throughput-{run_id}"})


@pytest.mark.docker
@pytest.mark.slow
def test_lis_throughput_end_to_end(repo_copy, image_tag, docker_client):
    run_id = f"pytest-tp-{uuid.uuid4().hex[:6]}"
    run(["lis", "tasks", "--domain", "math", "--profile", "ci", "--out", "data/tasks/math.jsonl"], cwd=repo_copy)
    with ChatServer(PerConversation(latency_s=0.3)) as srv:
        add_model(repo_copy, "served", srv.base_url)
        r = run(["lis", "throughput", "--profile", "ci", "--model", "served", "--domains", "math", "--tasks", "2",
                 "--concurrency", "2", "--repeats", "2", "--modes", "vanilla,sandbox",
                 "--out", "data/bench/throughput.json"], cwd=repo_copy, env={"LIS_RUN_ID": run_id})
        times = list(srv.request_times)
        requests = list(srv.requests)
    res = json.loads((repo_copy / "data/bench/throughput.json").read_text())
    assert json.loads(r.stdout) == res["summary"]
    assert [(x["mode"], x["repeat"]) for x in res["runs"]] == [("vanilla", 0), ("sandbox", 0), ("sandbox", 1),
                                                                ("vanilla", 1)]   # alternating order
    assert len(res["tasks"]) == 2 and res["settings"]["concurrency"] == 2 and res["model"]["name"] == "served"
    assert res["sandbox"]["backend"] == "docker" and res["sandbox"]["image"] == image_tag
    for x in res["runs"]:
        assert (x["queries"], x["completed"], x["errors"]) == (2, 2, 0), x
        assert 2 * 60 / (x["wall_s"] + 5e-4) <= x["qpm"] <= 2 * 60 / (x["wall_s"] - 5e-4)   # wall_s is rounded to ms
        assert x["output_tokens_per_s"] > 0 and x["tokens_per_s"] > x["output_tokens_per_s"]
        assert x["turns_mean"] == (1 if x["mode"] == "vanilla" else 2)
        assert x["terminations"] == ({"answered": 2} if x["mode"] == "vanilla" else {"submitted": 2})
    # one untimed warm-up episode per mode first, not counted
    assert [(w["mode"], w["queries"], w["completed"]) for w in res["warmup"]] == [("vanilla", 1, 1), ("sandbox", 1, 1)]
    # every episode really ran, against the one endpoint: 1 call per vanilla episode, 2 per sandbox one
    assert len(requests) == (1 + 2) + 2 * (2 * 1 + 2 * 2)
    assert sum(1 for q in requests if q.get("tools")) == 2 + 2 * 2 * 2
    # concurrency 2: the two vanilla episodes of the first timed run were in flight at once (0.3 s per call)
    assert abs(times[4] - times[3]) < 0.25 and not requests[3].get("tools") and not requests[4].get("tools")
    s = res["summary"]
    assert s["modes"]["vanilla"]["qpm"]["n"] == 2 and s["modes"]["sandbox"]["completed"] == 4
    ratio = s["ratios"]["sandbox/vanilla"]
    per = {(x["mode"], x["repeat"]): x["qpm"] for x in res["runs"]}
    assert ratio["values"] == pytest.approx([per[("sandbox", i)] / per[("vanilla", i)] for i in (0, 1)], abs=1e-3)
    assert ratio["n"] == 2 and ratio["ci95"][0] <= ratio["geomean"] <= ratio["ci95"][1]
    assert ratio["geomean"] == pytest.approx((ratio["values"][0] * ratio["values"][1]) ** 0.5, abs=1e-3)
    assert 0 < ratio["geomean"] < 1   # the sandbox episodes take two calls, a sandbox and a command
    assert not leftovers(docker_client, run_id)


@pytest.mark.docker
@pytest.mark.slow
def test_ctrl_c_stops_the_measurement_and_leaves_no_sandbox(repo_copy, image_tag, docker_client):
    run_id = f"pytest-tp-{uuid.uuid4().hex[:6]}"
    lis(["lis", "tasks", "--domain", "math", "--profile", "ci", "--out", "data/tasks/math.jsonl"], cwd=repo_copy)
    with ChatServer(PerConversation(latency_s=3.0)) as srv:
        add_model(repo_copy, "slow", srv.base_url)
        env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "LIS_RUN_ID": run_id}
        proc = subprocess.Popen(["lis", "throughput", "--profile", "ci", "--model", "slow", "--domains", "math",
                                 "--tasks", "2", "--concurrency", "2", "--repeats", "3", "--modes", "sandbox", "--warmup", "0",
                                 "--out", "data/bench/throughput.json"],
                                cwd=repo_copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while len(srv.requests) < 2:  # both episodes are in a model call: their sandboxes are running
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        assert len(leftovers(docker_client, run_id)) == 2
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130 and time.monotonic() - t0 < 10, err
    assert "Traceback" not in err.decode()
    assert not (repo_copy / "data/bench/throughput.json").exists()   # no number from a partial run
    wait_until(lambda: not leftovers(docker_client, run_id), 10, "the measurement's sandboxes removed", interval=0.2)


def test_missing_inputs_are_one_line_errors(repo_copy):
    r = lis(["lis", "throughput", "--profile", "ci", "--model", "base", "--domains", "chem", "--out", "x.json"],
            cwd=repo_copy, check=False)
    assert r.returncode == 2 and "no task file data/tasks/chem.jsonl" in r.stderr and "lis tasks" in r.stderr
    r = lis(["lis", "throughput", "--profile", "ci", "--model", "nobody", "--out", "x.json"], cwd=repo_copy, check=False)
    assert r.returncode == 2 and "no model named 'nobody'" in r.stderr
    (repo_copy / "data/tasks").mkdir(parents=True, exist_ok=True)
    (repo_copy / "data/tasks/math.jsonl").write_text('{"id": "x"}\n')
    r = lis(["lis", "throughput", "--profile", "ci", "--model", "base", "--domains", "math", "--out", "x.json"],
            cwd=repo_copy, check=False)
    assert r.returncode == 2 and "data/tasks/math.jsonl line 1: field domain: missing" in r.stderr
    assert "Traceback" not in r.stderr and not (repo_copy / "x.json").exists()

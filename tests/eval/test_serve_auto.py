"""`lis eval run` on a models entry whose `serve:` starts its server (serve.auto with a generic command:
our ChatServer in its own process, tests/chat_server_program.py): the job completes against it, and
the server's process group is gone after a normal exit, after an error, and after SIGINT or SIGTERM
to the `lis` process; a server that already answers is reused and left running; `lis throughput`
starts and stops it the same way."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from lis.util.server_process import healthy
from tests.conftest import BIN, copy_repo, run
from tests.serve.server import free_port
from tests.test_server_process import PROGRAM, wait_gone

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    repo = copy_repo(tmp_path_factory.mktemp("served-repo"))
    params = yaml.safe_load((repo / "params.yaml").read_text())
    for name, delay in (("served", 0), ("served-slow", 120)):
        port = free_port()
        params["models"][name] = {
            "backend": "openai", "model": "served-test", "base_url": f"http://127.0.0.1:{port}/v1",
            "api_key_env": "NO_KEY", "max_retries": 0, "timeout_s": 300, "sampling": {"max_tokens": 64},
            "serve": {"auto": True, "startup_timeout_s": 60,
                      "command": [sys.executable, str(PROGRAM), "--port", str(port), "--child", "--delay-s",
                                  str(delay), "--pids", str(repo / f"{name}.pids")]}}
    lingering = params["models"]["served-linger"] = json.loads(json.dumps(params["models"]["served"]))
    port = free_port()
    lingering["base_url"] = f"http://127.0.0.1:{port}/v1"
    lingering["serve"].update(linger_s=4, command=[sys.executable, str(PROGRAM), "--port", str(port), "--child",
                                                   "--pids", str(repo / "served-linger.pids")])
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    run(["lis", "tasks", "--domain", "math", "--profile", "ci", "--out", "data/tasks/math.jsonl"], cwd=repo)
    return repo, params["models"]


def pids(repo, name) -> list[int]:
    p = json.loads((repo / f"{name}.pids").read_text())
    return [p["server"], p["child"]]


def health(models, name) -> str:
    return models[name]["base_url"] + "/models"


def test_an_eval_job_starts_the_server_completes_against_it_and_stops_it(repo):
    repo, models = repo
    assert not healthy(health(models, "served"))
    run(["lis", "eval", "run", "--model", "served", "--domain", "math", "--mode", "vanilla", "--profile", "ci",
         "--limit", "2"], cwd=repo)
    m = json.loads((repo / "data/eval/served/math/vanilla/metrics.json").read_text())
    assert m["n"] == 2 and m["scored"] == 2 and m["errors"] == 0, m
    assert "serving on" in (repo / "logs/serve/served.log").read_text()
    assert wait_gone(*pids(repo, "served")), "the server's process group outlived the job"
    assert not healthy(health(models, "served"))


def test_the_server_is_stopped_after_an_error(repo):
    repo, models = repo
    (repo / "served.pids").unlink(missing_ok=True)
    r = run(["lis", "eval", "run", "--model", "served", "--domain", "math", "--mode", "vanilla", "--profile", "ci",
             "--tasks", "data/tasks/none.jsonl", "--out", "data/eval/err"], cwd=repo, check=False)
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 2 and last.startswith("error: ") and "none.jsonl" in last, r.stderr
    assert (repo / "served.pids").exists(), "the server was not started before the error"
    assert wait_gone(*pids(repo, "served")) and not healthy(health(models, "served"))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_server_is_stopped_when_lis_is_interrupted(repo, sig):
    repo, models = repo
    (repo / "served-slow.pids").unlink(missing_ok=True)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.Popen([str(BIN / "lis"), "eval", "run", "--model", "served-slow", "--domain", "math", "--mode",
                             "vanilla", "--profile", "ci", "--limit", "1", "--out", f"data/eval/sig{int(sig)}"],
                            cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        end = time.monotonic() + 90
        while not (repo / "served-slow.pids").exists() or not healthy(health(models, "served-slow")):
            assert proc.poll() is None and time.monotonic() < end, proc.stdout.read() if proc.poll() is not None else ""
            time.sleep(0.2)
        time.sleep(2)  # the episode's model call is in flight (each reply takes 120 s)
        assert proc.poll() is None
        proc.send_signal(sig)
        out = proc.communicate(timeout=60)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (130, 128 + int(sig)), out[-2000:]
    assert wait_gone(*pids(repo, "served-slow")), "the server's process group outlived the interrupted lis"
    assert not healthy(health(models, "served-slow"))


def test_a_server_that_already_answers_is_reused_and_left_running(repo):
    repo, models = repo
    spec = models["served"]
    own = subprocess.Popen(spec["serve"]["command"], start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 60
        while not healthy(health(models, "served")):
            assert own.poll() is None and time.monotonic() < end
            time.sleep(0.2)
        run(["lis", "eval", "run", "--model", "served", "--domain", "math", "--mode", "vanilla", "--profile", "ci",
             "--limit", "1", "--out", "data/eval/reuse"], cwd=repo)
        assert json.loads((repo / "data/eval/reuse/metrics.json").read_text())["scored"] == 1
        assert own.poll() is None and healthy(health(models, "served")), "lis stopped a server it did not start"
    finally:
        os.killpg(own.pid, signal.SIGKILL)
        own.wait()


def test_lis_throughput_starts_the_server_and_stops_it(repo):
    repo, models = repo
    (repo / "served.pids").unlink(missing_ok=True)
    run(["lis", "throughput", "--model", "served", "--domains", "math", "--tasks", "1", "--repeats", "1",
         "--warmup", "0", "--modes", "vanilla", "--concurrency", "1", "--out", "data/bench/tp.json", "--profile", "ci"],
        cwd=repo)
    res = json.loads((repo / "data/bench/tp.json").read_text())
    vanilla = res["summary"]["modes"]["vanilla"]
    assert res["model"]["endpoint"] == models["served"]["base_url"]
    assert vanilla["completed"] == 1 and vanilla["errors"] == 0 and vanilla["qpm"]["mean"] > 0
    assert wait_gone(*pids(repo, "served")) and not healthy(health(models, "served"))


def test_a_lingering_server_serves_the_models_next_eval_job_and_then_stops(repo):
    """serve.linger_s: two eval jobs of one model, one after the other, load it once; it stops by
    itself once idle for linger_s. A changed serve.env is another server: started afresh."""
    repo, models = repo
    url = health(models, "served-linger")
    for out in ("data/eval/linger1", "data/eval/linger2"):
        run(["lis", "eval", "run", "--model", "served-linger", "--domain", "math", "--mode", "vanilla", "--profile",
             "ci", "--limit", "1", "--out", out], cwd=repo)
        assert json.loads((repo / out / "metrics.json").read_text())["scored"] == 1
        assert healthy(url), "the server did not stay up for the model's next job"
    log = (repo / "logs/serve/served-linger.log").read_text()
    assert log.count("lis starts:") == 1, log[-3000:]
    first = pids(repo, "served-linger")
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["models"]["served-linger"]["serve"]["env"] = {"X": "1"}
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    run(["lis", "eval", "run", "--model", "served-linger", "--domain", "math", "--mode", "vanilla", "--profile",
         "ci", "--limit", "1", "--out", "data/eval/linger3"], cwd=repo)
    assert wait_gone(*first), "a server started with another environment was reused"
    assert (repo / "logs/serve/served-linger.log").read_text().count("lis starts:") == 2
    assert wait_gone(*pids(repo, "served-linger"), timeout=30), "the idle server was not stopped after linger_s"
    assert not healthy(url) and "idle for 4 s: stopping it" in (repo / "logs/serve/served-linger.log").read_text()

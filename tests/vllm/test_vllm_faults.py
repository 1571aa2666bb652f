"""A vLLM server that dies or never comes up, under `lis eval run` with ``serve.auto``: the hostile-upstream rules
hold (model errors, retried, never a score; finished episodes kept; the job fails in one line; no process left)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
import yaml

from lis.util.server_process import healthy
from tests.conftest import BIN, copy_repo, run
from tests.serve.server import free_port
from tests.test_server_process import wait_gone
from tests.vllm.conftest import served_entry

pytestmark = [pytest.mark.slow, pytest.mark.docker]


@pytest.fixture(scope="module")
def repo(tmp_path_factory, vllm_model_dir):
    repo = copy_repo(tmp_path_factory.mktemp("vllm-faults"))
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["models"]["doomed"] = {**served_entry(vllm_model_dir, free_port(), "doomed"), "max_retries": 1}
    params["models"]["never"] = served_entry(vllm_model_dir, free_port(), "never", startup_timeout_s=3)
    params["models"]["broken"] = served_entry(vllm_model_dir / "missing", free_port(), "broken")
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    run(["lis", "tasks", "--domain", "instruct_pretrain", "--profile", "ci", "--out",
         "data/tasks/instruct_pretrain.jsonl"], cwd=repo)
    run(["lis", "image", "build", "--profile", "ci", "--out", "data/image/manifest.json"], cwd=repo)
    return repo, params["models"]


def journal_rows(repo) -> list[dict]:
    return [json.loads(x) for f in (repo / "data/journal").rglob("*.jsonl") for x in f.read_text().splitlines()
            if x.strip()]


def test_vllm_killed_in_the_middle_of_an_eval(repo, docker_client):
    repo, models = repo
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "LIS_RUN_ID": "pytest-vllm-kill",
           "LIS_BACKOFF_S": "0.05"}
    proc = subprocess.Popen([str(BIN / "lis"), "eval", "run", "--model", "doomed", "--domain", "instruct_pretrain",
                             "--mode", "sandbox", "--profile", "ci", "--workers", "2"],
                            cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid_file = repo / "logs/serve/doomed.pid"
    try:
        end = time.monotonic() + 600
        while len([r for r in journal_rows(repo) if r.get("termination") not in ("model_error",)]) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end, "no finished episode after 600 s"
            time.sleep(0.2)
        pgid = json.loads(pid_file.read_text())["pgid"]
        os.killpg(pgid, signal.SIGKILL)  # vLLM dies with episodes in flight
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = [x for x in err.splitlines() if x.strip()]
    assert proc.returncode == 2 and lines[-1].startswith("error: ") and "model_error" in lines[-1], err[-3000:]
    assert "no accuracy published" in lines[-1]
    assert not (repo / "data/eval/doomed/instruct_pretrain/sandbox/metrics.json").exists()
    rows = journal_rows(repo)
    finished = [r for r in rows if r.get("termination") not in ("model_error", "interrupted")]
    errors = [r for r in rows if r.get("termination") == "model_error"]
    assert len(finished) >= 2 and errors, "finished episodes must stay in the journal beside the errors"
    assert all(r.get("reward") is None for r in errors), "an outage became a score"
    assert wait_gone(pgid), "vLLM's process group outlived the job"
    time.sleep(1)
    left = docker_client.api.containers(all=True, filters={"label": ["lis.run=pytest-vllm-kill"]})
    assert not left, f"{len(left)} sandbox(es) left behind"


@pytest.mark.parametrize("name,words", [("never", "did not answer"), ("broken", "exited with code")])
def test_a_vllm_that_never_becomes_healthy_fails_the_stage_in_one_line_naming_its_log(repo, name, words):
    repo, models = repo
    r = run(["lis", "eval", "run", "--model", name, "--domain", "instruct_pretrain", "--mode", "sandbox",
             "--profile", "ci", "--limit", "1"], cwd=repo, check=False, timeout=600)
    lines = [x for x in r.stderr.splitlines() if x.strip()]   # the log's "starting model server" line, then the error
    assert r.returncode == 2 and "Traceback" not in r.stderr and lines[-1].startswith("error: "), r.stderr[-3000:]
    assert words in lines[-1] and f"logs/serve/{name}.log" in lines[-1], lines[-1]
    assert not healthy(models[name]["base_url"][:-3] + "/health")
    assert not (repo / f"logs/serve/{name}.pid").exists()
    assert subprocess.run(["pgrep", "-f", "--", f"--served-model-name {name}"], capture_output=True).returncode == 1

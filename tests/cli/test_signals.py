"""Signals the same for every long command: SIGINT → 130, SIGTERM → 143, and one line "interrupted at
<how far it got>; run again to resume" (lis/cli/__init__.py). `lis train sft` used to exit 0 on SIGTERM
(Lightning's SIGTERMException is a SystemExit without a code) and 1 on SIGINT, with no word."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import BIN, ROOT, run

pytestmark = [pytest.mark.slow]


def _start(cmd: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)},
                            start_new_session=True)


def _signal_when(proc: subprocess.Popen, ready, sig: int, timeout: float = 300) -> tuple[int, str]:
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None:
            raise AssertionError(f"exited {proc.returncode} before the signal:\n{proc.stderr.read()[-3000:]}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError("never got to where the signal was to be sent")
        time.sleep(0.2)
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError(f"still running 120 s after {signal.Signals(sig).name}") from None
    return proc.returncode, err


def _last_line(err: str) -> str:
    return [x for x in err.splitlines() if x.strip()][-1]


@pytest.mark.docker
def test_eval_run_stops_with_143_and_says_how_far_it_got(repo_copy, image_tag):
    from lis.models.server import ChatServer
    from tests.inspect_tasks.replay import ReplayModel, bash

    run(["lis", "tasks", "--domain", "math", "--profile", "ci", "--limit", "2", "--out", "data/tasks/math.jsonl"],
        cwd=repo_copy)
    from lis.tasks import read_tasks

    tasks = read_tasks(repo_copy / "data/tasks/math.jsonl")
    scripts = {t.problem_statement[:60]: [{"role": "assistant", "content": None,
                                          "tool_calls": [bash("sleep 100", "s")]}] for t in tasks}
    model = ReplayModel(scripts)
    with ChatServer(model) as srv:
        params = yaml.safe_load((repo_copy / "params.yaml").read_text())
        params["models"]["slow"] = {"backend": "openai", "model": "slow", "base_url": srv.base_url,
                                    "api_key_env": "NO_KEY", "max_retries": 0}
        (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        proc = _start(["lis", "eval", "run", "--model", "slow", "--domain", "math", "--mode", "sandbox",
                       "--profile", "ci"], repo_copy)
        code, err = _signal_when(proc, lambda: len(model.calls) >= 2, signal.SIGTERM)
    assert code == 143 and _last_line(err) == "interrupted; run again to resume", err[-2000:]
    journal = (repo_copy / "data/journal/slow/math/sandbox.jsonl").read_text().splitlines()
    assert [json.loads(x)["termination"] for x in journal] == ["interrupted", "interrupted"]

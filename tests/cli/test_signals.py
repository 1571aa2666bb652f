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
    t0 = time.monotonic()
    try:
        _, err = proc.communicate(timeout=120)
        proc.after_signal_s = time.monotonic() - t0  # how long it took to end
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
    # the commands in flight (sleep 100) are not waited for: closing a sandbox waited for its request
    assert proc.after_signal_s < 15, proc.after_signal_s
    journal = (repo_copy / "data/journal/slow/math/sandbox.jsonl").read_text().splitlines()
    assert [json.loads(x)["termination"] for x in journal] == ["interrupted", "interrupted"]


def _log_has(path: Path, text: str):
    return lambda: path.is_file() and text in path.read_text(errors="replace")


def _start_env(cmd: list[str], cwd: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT), **env},
                            start_new_session=True)


@pytest.mark.docker
def test_teacher_stops_with_143_says_how_far_and_resumes_from_there(repo_copy, image_tag, docker_client):
    """SIGTERM while the teacher's episodes run: 143, "interrupted at teacher k/N", no sandbox left;
    the next run keeps the episodes that finished and runs only the others."""
    run(["lis", "context-tasks", "--out-dir", "data/train/context", "--profile", "ci"], cwd=repo_copy)
    manifest = repo_copy / "image.json"
    manifest.write_text(json.dumps({"image": {"tag": image_tag}}))
    log = repo_copy / "teacher.log"
    cmd = ["lis", "train", "teacher", "--profile", "ci", "--context-tasks", "data/train/context/files.jsonl",
           "--image-manifest", str(manifest), "--out", "data/train/teacher", "--log", str(log)]
    run_id = "pytest-teacher-signal"
    proc = _start_env(cmd, repo_copy, {"LIS_RUN_ID": run_id})
    code, err = _signal_when(proc, _log_has(log, "teacher: "), signal.SIGTERM)
    last = _last_line(err)
    assert code == 143 and last.startswith("interrupted at teacher ") and last.endswith("; run again to resume"), \
        err[-2000:]
    assert docker_client.containers.list(all=True, sparse=True, filters={"label": f"lis.run={run_id}"}) == []
    assert proc.after_signal_s < 15, proc.after_signal_s
    assert not (repo_copy / "data/train/teacher/trajectories.jsonl").exists()  # nothing half-written as done
    (partial,) = (repo_copy / "data/train/teacher").glob(".trajectories.*.tmp")
    kept = [d for d in map(json.loads, filter(str.strip, partial.read_text().splitlines()))
            if d["termination"] != "interrupted"]  # an episode the signal cut is run again
    assert kept, "the interrupted run finished no episode before the signal"
    r = run(cmd, cwd=repo_copy, env={"LIS_RUN_ID": run_id})
    total = json.loads((repo_copy / "data/train/teacher/manifest.json").read_text())["episodes"]
    assert f"teacher: {len(kept)} of {total} episodes kept from the interrupted run" in r.stderr, r.stderr[-2000:]
    rows = [json.loads(x) for x in (repo_copy / "data/train/teacher/trajectories.jsonl").read_text().splitlines()]
    assert [d["teacher"]["index"] for d in rows] == list(range(total))
    by_index = {d["teacher"]["index"]: d for d in rows}
    assert all(by_index[d["teacher"]["index"]]["episode_id"] == d["episode_id"] for d in kept)  # kept, not rerun
    assert not list((repo_copy / "data/train/teacher").glob(".trajectories.*.tmp"))


def test_behaviour_analysis_stops_with_130_and_writes_nothing(tmp_path):
    """Ctrl-C while 4,000 episodes are classified: 130, "interrupted at behaviour k/4000", no output."""
    from tests.cli.test_record_fuzz import CALL, STEP, TRAJ

    with open(tmp_path / "trajectories.jsonl", "w", encoding="utf-8") as f:
        for i in range(4000):
            steps = [{**STEP, "index": k, "content": "let me compute", "calls": [
                {**CALL, "id": f"c{k}", "arguments": {"command": f"python3 -c 'print({i} * {k})' && grep -n x "
                                                                 f"/testbed/documents/doc{k}.txt"}}]} for k in range(6)]
            f.write(json.dumps({**TRAJ, "task_id": f"t{i}", "episode_id": f"e{i}", "steps": steps, "turns": 6}) + "\n")
    log = tmp_path / "behaviour.log"
    proc = _start(["lis", "behaviour", "analyse", str(tmp_path / "trajectories.jsonl"), "--out",
                   str(tmp_path / "behaviour.json"), "--log", str(log)], tmp_path)
    code, err = _signal_when(proc, _log_has(log, "behaviour: "), signal.SIGINT)
    last = _last_line(err)
    assert code == 130 and last.startswith("interrupted at behaviour ") and last.endswith("; run again to resume"), \
        err[-2000:]
    assert not (tmp_path / "behaviour.json").exists()


def test_report_stops_with_143_and_says_which_part(tmp_path):
    """SIGTERM once the report's tables are written, while its figures render: 143 and the part it was
    at; run again, the report is whole."""
    from tests.report.build_inputs import build_all, make_project

    root = make_project(tmp_path)
    build_all(root)
    cmd = ["lis", "report", "--params", str(root / "params.yaml"), "--log", str(root / "report.log")]
    proc = _start(cmd, root)
    tables = root / "paper_figures" / "tables"
    code, err = _signal_when(proc, lambda: tables.is_dir() and any(tables.iterdir()), signal.SIGTERM)
    last = _last_line(err)
    assert code == 143 and last.startswith("interrupted at report: ") and last.endswith("; run again to resume"), \
        err[-2000:]
    assert not (root / "paper_figures" / "index.json").exists()
    run(cmd, cwd=root)
    assert (root / "paper_figures" / "index.json").is_file()

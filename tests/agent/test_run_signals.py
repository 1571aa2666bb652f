"""`lis run` under signals: nothing leaks after SIGINT; after SIGKILL, cleanup removes ours only."""
from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid

import pytest

from tests.conftest import BIN, ROOT, run

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.training]


def start_run(run_id: str, tmp_path) -> subprocess.Popen:
    from tests.serving import tiny_model_dir

    env = {**os.environ, "LIS_RUN_ID": run_id, "PATH": f"{BIN}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(["lis", "run", "--model", str(tiny_model_dir()), "--profile", "smoke", "--max-steps", "100",
                             "--query", "Run `sleep 100` then write 1 to /testbed/output/answer.txt",
                             "--output-dir", str(tmp_path)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def containers(client, run_id: str):
    # sparse: no inspect of each listed container (one removed between the listing and its inspect
    # made the SDK raise NotFound)
    return client.containers.list(all=True, sparse=True, filters={"label": [f"lis.run={run_id}"]})


def wait_for_sandbox(client, run_id: str, proc, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not containers(client, run_id):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no sandbox appeared"
        time.sleep(0.2)


def test_sigint_leaves_no_container(docker_client, image_tag, tmp_path):
    run_id = "sigint" + uuid.uuid4().hex[:6]
    proc = start_run(run_id, tmp_path)
    try:
        wait_for_sandbox(docker_client, run_id, proc)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        assert proc.returncode != 0
        assert "Traceback" not in proc.stderr.read().decode()
        time.sleep(1)
        assert containers(docker_client, run_id) == []
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigkill_then_cleanup_removes_ours_only(docker_client, image_tag, tmp_path):
    run_id = "sigkill" + uuid.uuid4().hex[:6]
    bystander = docker_client.containers.run(image_tag, ["sleep", "120"], detach=True, network_mode="none")
    other = docker_client.containers.run(image_tag, ["sleep", "120"], detach=True, network_mode="none",
                                         labels={"lis.managed": "true", "lis.run": "someone-else",
                                                 "lis.owner": f"{os.uname().nodename}:1",
                                                 "lis.expires": str(int(time.time()) + 3600)})
    proc = start_run(run_id, tmp_path)
    try:
        wait_for_sandbox(docker_client, run_id, proc)
        proc.kill()
        proc.wait(timeout=30)
        r = run(["lis", "sandbox", "cleanup", "--run", run_id])
        assert "removed" in r.stdout
        time.sleep(0.5)
        assert containers(docker_client, run_id) == []
        # the orphan sweep (no --run) leaves running sandboxes of live owners and unlabelled containers alone
        run(["lis", "sandbox", "cleanup"])
        bystander.reload()
        assert bystander.status == "running"
        # --all means every *lis* sandbox, and only those: listed, not removed, as the suite's other worker
        # may have lis sandboxes at work (the selection is the one the removal uses: lis.sandbox.cleanup.find)
        listed = run(["lis", "sandbox", "cleanup", "--all", "--dry-run"]).stdout
        assert other.name in listed, listed
        assert bystander.name not in listed, listed
        bystander.reload()
        assert bystander.status == "running"  # not ours
    finally:
        if proc.poll() is None:
            proc.kill()
        for c in (bystander, other):
            try:
                c.remove(force=True)
            except Exception:
                pass


def test_model_error_exits_3_and_still_writes_the_trajectory(repo_copy, image_tag, tmp_path):
    """An unreachable server: the episode ends in model_error; `lis run` says so and exits 3."""
    import json

    import yaml

    params = yaml.safe_load((repo_copy / "params.yaml").read_text())
    params["models"]["dead"] = {"backend": "openai", "model": "dead", "base_url": "http://127.0.0.1:9/v1",
                                "api_key_env": "NO_KEY", "max_retries": 1, "backoff_s": 0, "timeout_s": 5}
    (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    out = tmp_path / "out"
    r = run(["lis", "run", "--model", "dead", "--profile", "ci", "--query", "Write 1 to /testbed/output/answer.txt",
             "--output-dir", str(out)], cwd=repo_copy, check=False, env={"COLUMNS": "300"})
    assert r.returncode == 3, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    assert "model_error" in r.stderr and "127.0.0.1:9" in r.stderr
    (run_dir,) = list(out.iterdir())
    traj = json.loads((run_dir / "trajectory.json").read_text())
    assert traj["termination"] == "model_error" and "127.0.0.1:9" in traj["error"]

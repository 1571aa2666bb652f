"""scripts/setup.sh: idempotent, and never restarts or reconfigures a running Docker engine. (`make paper` as
written, twice, is tests/pipeline/test_runs.py: the session's one pipeline run.)"""
from __future__ import annotations

import subprocess
import time

import pytest

from tests.conftest import BIN, run

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.training]

VENV = {"LIS_VENV": str(BIN.parent)}


def dockerd_pids() -> set[str]:
    r = subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True, text=True)
    return set(r.stdout.split())


@pytest.mark.docker
def test_running_engine_is_left_alone(docker_client):
    before = dockerd_pids()
    t0 = time.monotonic()
    run(["bash", "scripts/setup.sh", "docker"])
    assert time.monotonic() - t0 < 5
    assert dockerd_pids() == before


def test_venv_step_is_a_no_op_when_installed():
    t0 = time.monotonic()
    r = run(["bash", "scripts/setup.sh", "venv"])
    assert time.monotonic() - t0 < 5, r.stderr
    assert "installing" not in r.stderr


@pytest.mark.docker
def test_image_step_reuses_the_image_and_writes_no_stage_output(image_tag, repo_copy):
    r = run(["bash", "scripts/setup.sh", "image"], cwd=repo_copy, env=VENV)
    assert "is up to date" in r.stderr and image_tag in r.stderr
    assert not (repo_copy / "data/image/manifest.json").exists()  # the image stage's output is the pipeline's


def test_unknown_step_is_refused():
    r = run(["bash", "scripts/setup.sh", "everything"], check=False)
    assert r.returncode == 1 and "unknown step 'everything'" in r.stderr

"""Fixtures of the Inspect-task tests: a project copy with a task file, a replaying model server, and
the check that no sandbox is left behind."""
from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run


def _ours(labels: dict) -> bool:
    """Started by this test process, or left by a process that has ended (``lis.owner`` = host:pid):
    not another lis run on the machine that is still going."""
    from lis.sandbox.cleanup import _owner_alive

    return labels.get("lis.owner") == f"{socket.gethostname()}:{os.getpid()}" or not _owner_alive(
        labels.get("lis.owner", ""))


def lis_containers(all_runs: bool = False) -> list[str]:
    """The lis sandbox containers that exist: this test process's and those its ended processes left
    (``all_runs``: every one, another run's too)."""
    from lis.sandbox.engine import connect

    found = connect().api.containers(all=True, filters={"label": ["lis.managed=true"]})
    return [c["Id"][:12] for c in found if all_runs or _ours(c.get("Labels") or {})]


def add_replay_model(repo: Path, base_url: str, name: str = "replay") -> None:
    """A models entry of the repository copy's params for the replaying server (no sampling settings:
    the requests carry only the episode's seed, as the Inspect solver's do)."""
    path = repo / "params.yaml"
    data = yaml.safe_load(path.read_text())
    data["models"][name] = {"backend": "openai", "model": name, "base_url": base_url, "api_key_env": "REPLAY_API_KEY",
                            "max_retries": 0, "timeout_s": 60, "sampling": {}}
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def inspect_env(base_url: str) -> dict[str, str]:
    """What Inspect's ``openai-api/replay/<model>`` provider reads."""
    return {"REPLAY_API_KEY": "x", "REPLAY_BASE_URL": base_url, "REPLAY_API_KEY_ENV": "x",
            "INSPECT_LOG_LEVEL": "warning", "INSPECT_PY_LOGGER_LEVEL": "warning"}


def inspect_eval(args: list[str], env: dict[str, str] | None = None, timeout: int = 600, cwd: Path = ROOT):
    return run(["inspect", "eval", *args, "--display", "plain", "--no-score-display"], env=env, timeout=timeout,
               cwd=cwd)


def read_log(logs: Path) -> dict:
    """The one JSON log in ``logs``."""
    (path,) = sorted(logs.glob("*.json"))
    return json.loads(path.read_text())


@pytest.fixture
def math_project(repo_copy) -> Path:
    """A repository copy with 3 math tasks (the AIME sample, ci profile) in data/tasks/math.jsonl."""
    run(["lis", "tasks", "--domain", "math", "--profile", "ci", "--limit", "3", "--out", "data/tasks/math.jsonl"],
        cwd=repo_copy)
    return repo_copy


@pytest.fixture(autouse=True)
def no_sandbox_left():
    """Each test leaves no lis sandbox container behind (checked for real after it)."""
    before = set(lis_containers())
    yield
    left = [c for c in lis_containers() if c not in before]
    assert not left, f"containers left behind: {left}"


os.environ.setdefault("INSPECT_DISPLAY", "plain")

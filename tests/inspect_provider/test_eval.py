"""A real ``inspect eval``, offline, on both backends: tests/inspect_provider/offline_task.py (3 samples from
data/samples, Inspect's bash() and python() tools, mockllm/model scripted to call them) with
``--sandbox lis:<backend>``. The log holds what only a lis sandbox produces, and no container of
the provider is left afterwards."""
from __future__ import annotations

import json

import pytest

from tests.conftest import run
from tests.inspect_provider.conftest import BACKENDS, inspect_containers

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.mark.parametrize("backend", BACKENDS)
def test_inspect_eval_runs_in_lis_sandboxes(backend, tmp_path):
    """Docker through a config file with warm sandboxes (task_cleanup must remove the spare ones),
    bubblewrap through the ``lis:bwrap`` shorthand."""
    logs = tmp_path / "logs"
    spec = f"lis:{backend}"
    if backend == "docker":
        (tmp_path / "lis.yaml").write_text("backend: docker\nwarm: 2\n")
        spec = f"lis:{tmp_path / 'lis.yaml'}"
    r = run(["inspect", "eval", "tests/inspect_provider/offline_task.py", "--sandbox", spec, "--log-dir", str(logs),
             "--log-format", "json", "--display", "plain", "--no-score-display"], timeout=600)
    (log,) = logs.glob("*.json")
    d = json.loads(log.read_text())
    assert d["status"] == "success", r.stdout[-2000:]
    assert d["eval"]["sandbox"]["type"] == "lis"
    assert len(d["samples"]) == 3
    for s in d["samples"]:
        tools = [m["content"] for m in s["messages"] if m["role"] == "tool"]
        words = len(s["metadata"]["problem"].split())
        # bash(): the sandbox user in the working folder, the problem file Inspect copied in (write_file)
        assert tools[0] == f"sandbox\n1000\n/testbed\n{words}\n", tools
        # python(): stdin to a fresh python3; the file it wrote, read back by the scorer (read_file)
        assert tools[1] == f"{words} words, uid 1000\n", tools
        assert s["scores"]["answer_file"]["value"] == "C", s["scores"]
        assert s["scores"]["answer_file"]["answer"] == f"{words} words, uid 1000"
    assert inspect_containers() == [], "the provider left containers behind"

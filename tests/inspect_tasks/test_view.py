"""A lis eval job, exported with ``lis export inspect``, opens in Inspect View: ``inspect view`` serves
the log directory, headless Chromium loads the viewer, and a sample's tool call and its
observation are on the page (messages tab), as is the list of logs with the job's accuracy."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest

from lis.models.server import ChatServer
from tests.browser import Browser
from tests.conftest import BIN, run
from tests.inspect_tasks.conftest import add_replay_model
from tests.inspect_tasks.replay import ReplayModel, equivalence_scripts
from tests.wait import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.browser, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(log_dir: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen([str(BIN / "inspect"), "view", "--log-dir", str(log_dir), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"})

    def answers() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/logs", timeout=2) as r:
                return r.status == 200
        except OSError:
            if proc.poll() is not None:
                raise AssertionError(f"inspect view exited: {proc.stdout.read().decode()[-2000:]}") from None
            return False

    if not wait_until(answers, 60, "inspect view answering", interval=0.3, fail=False):
        os.killpg(proc.pid, signal.SIGTERM)
        raise AssertionError("inspect view did not answer within 60 s")
    return proc


def test_an_exported_lis_job_opens_in_inspect_view(math_project, tmp_path):
    from lis.tasks import read_tasks

    tasks = read_tasks(math_project / "data/tasks/math.jsonl")
    with ChatServer(ReplayModel(equivalence_scripts(tasks))) as srv:
        add_replay_model(math_project, srv.base_url)
        run(["lis", "eval", "run", "--model", "replay", "--domain", "math", "--mode", "sandbox", "--profile", "ci"],
            cwd=math_project, env={"REPLAY_API_KEY": "x"})
    logs = tmp_path / "logs"
    out = run(["lis", "export", "inspect", "data/eval", "--out", str(logs)], cwd=math_project).stdout.split()
    (log_file,) = [Path(p) for p in out]
    assert log_file.parent == logs and log_file.suffix == ".eval"

    port = _free_port()
    viewer = _serve(logs, port)
    try:
        with Browser(timeout_s=60) as browser:
            listing = browser.open_url(f"http://127.0.0.1:{port}/", settle_s=0.5)
            assert listing.wait_for("document.body.innerText.includes('lis/math')", timeout_s=60), \
                listing.eval("document.body.innerText.slice(0, 2000)")
            assert "lis/replay" in listing.eval("document.body.innerText")
            sample = tasks[0].id
            page = browser.open_url(f"http://127.0.0.1:{port}/#/logs/{log_file.name}/samples/sample/{sample}/1/messages",
                                    settle_s=0.5)
            command = "cd /testbed/documents && export LIS_X=41 && pwd"
            shown = page.wait_for(f"document.body.innerText.includes({command!r})", timeout_s=60)
            page.screenshot(tmp_path / "sample.png")
            text = page.eval("document.body.innerText")
            assert shown, text[:3000]
            assert "execute_bash" in text and "/testbed/documents" in text and "Exit code: 0" in text, text[:3000]
            problems = [p for p in page.errors() if "/api/flow" not in p]  # the viewer asks for an optional flow file
            assert not [p for p in problems if p.startswith("uncaught")], problems
    finally:
        os.killpg(viewer.pid, signal.SIGTERM)
        viewer.wait(timeout=30)

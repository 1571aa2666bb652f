"""A real `lis serve` process on a free loopback port, its upstream a replay server (ChatServer
around a ScriptedModel) in the test process; helpers to look at its sandboxes in Docker."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Iterator

from lis.models.scripted import assistant, tool_call
from tests.conftest import BIN, ROOT


def solve(answer: str = "42", files: dict[str, str] | None = None, before: str = "") -> dict:
    """One assistant turn that writes the answer (and ``files``) into /testbed/output, then submits."""
    files = files or {"report.md": "# report\nthe answer is 42\n"}
    writes = " && ".join(f"printf %s {json.dumps(text)} > /testbed/output/{name}" for name, text in files.items())
    cmd = f"{before}mkdir -p /testbed/output && printf %s {json.dumps(answer)} > /testbed/output/answer.txt && {writes}"
    return assistant(None, tool_call("execute_bash", {"command": cmd}), tool_call("submit", {}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def containers(client, run_label: str) -> list:
    # sparse: no inspect per listed container, which raced with its removal (NotFound)
    return client.containers.list(all=True, sparse=True, filters={"label": [f"lis.run={run_label}"]})


class Served:
    """A started `lis serve`: base_url (…/v1), run_label (its sandboxes' lis.run), the process, its log."""

    def __init__(self, proc: subprocess.Popen, port: int, run_id: str, log: Path, files_dir: Path):
        self.proc, self.port, self.run_id, self.log, self.files_dir = proc, port, run_id, log, files_dir
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.run_label = f"serve-{run_id}"

    def health(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5) as r:
            return json.loads(r.read())

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_serve(upstream_url: str, tmp: Path, *args: str, env: dict | None = None, run_id: str | None = None,
                timeout: float = 90) -> Served:
    run_id = run_id or "t" + uuid.uuid4().hex[:10]
    port = free_port()
    log = tmp / f"serve-{run_id}.log"
    files_dir = tmp / "files"
    full_env = {**os.environ, "LIS_RUN_ID": run_id, "PATH": f"{BIN}:{os.environ['PATH']}", **(env or {})}
    full_env.setdefault("LIS_SERVE_API_KEY", "")
    cmd = [str(BIN / "lis"), "serve", "--profile", "ci", "--model", "replay", "--base-url", upstream_url,
           "--port", str(port), "--files-dir", str(files_dir), *args]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    served = Served(proc, port, run_id, log, files_dir)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"lis serve exited with {proc.returncode}:\n{served.log_text()[-3000:]}")
        try:
            if served.health()["status"] == "ok":
                return served
        except OSError:
            pass
        if time.monotonic() > deadline:
            stop(served, signal.SIGKILL)
            raise AssertionError(f"lis serve not ready after {timeout:.0f} s:\n{served.log_text()[-3000:]}")
        time.sleep(0.2)


def stop(served: Served, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
    """Send ``sig`` to the server (only it, not its group) and wait; return its exit status."""
    if served.proc.poll() is None:
        served.proc.send_signal(sig)
    try:
        return served.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(served.proc.pid, signal.SIGKILL)
        served.proc.wait()
        raise AssertionError(f"lis serve did not stop within {timeout}s after {signal.Signals(sig).name}:\n"
                             f"{served.log_text()[-3000:]}")


@contextlib.contextmanager
def serving(upstream_url: str, tmp: Path, *args: str, env: dict | None = None) -> Iterator[Served]:
    served = start_serve(upstream_url, tmp, *args, env=env)
    try:
        yield served
    finally:
        if served.proc.poll() is None:
            stop(served)

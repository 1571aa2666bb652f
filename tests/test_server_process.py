"""The model-server launcher (lis.util.server_process) with a real server program: our ChatServer
in its own process (tests/chat_server_program.py). Started when down, reused when up (and then
not stopped), one line when it never answers or exits, the whole process group gone afterwards,
and a second process sharing a server keeps it alive until the last user leaves."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lis.errors import LisError
from lis.util import server_process
from lis.util.server_process import ensure, healthy, release, release_all
from tests.conftest import ROOT
from tests.serve.server import free_port
from tests.wait import wait_until

PROGRAM = ROOT / "tests/chat_server_program.py"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of ours counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(*pids: int, timeout: float = 20) -> bool:
    return wait_until(lambda: not any(alive(p) for p in pids), timeout, "the processes gone", interval=0.1, fail=False)


def command(port: int, pids: Path, *extra: str) -> list[str]:
    return [sys.executable, str(PROGRAM), "--port", str(port), "--child", "--pids", str(pids), *extra]


@pytest.fixture(autouse=True)
def _released():
    yield
    release_all()


def test_started_when_down_reused_in_process_and_stopped_with_its_group(tmp_path):
    port, pids = free_port(), tmp_path / "pids.json"
    url = f"http://127.0.0.1:{port}/v1/models"
    assert not healthy(url)
    srv = ensure("m", command(port, pids), url, state_dir=tmp_path / "serve", startup_timeout_s=60)
    assert srv.started and healthy(url)
    assert ensure("m", ["false"], url, state_dir=tmp_path / "serve") is srv  # one server per model per process
    p = json.loads(pids.read_text())
    assert alive(p["server"]) and alive(p["child"])
    assert "serving on" in (tmp_path / "serve/m.log").read_text()
    assert json.loads((tmp_path / "serve/m.pid").read_text())["pgid"] == p["server"]
    release("m")
    assert wait_gone(p["server"], p["child"]), "the server's process group outlived release"
    assert not healthy(url) and not (tmp_path / "serve/m.pid").exists()


def test_a_server_that_answers_is_reused_and_not_stopped(tmp_path):
    port, pids = free_port(), tmp_path / "pids.json"
    url = f"http://127.0.0.1:{port}/v1/models"
    own = subprocess.Popen(command(port, pids), start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 60
        while not healthy(url):
            assert time.monotonic() < end and own.poll() is None
            time.sleep(0.2)
        srv = ensure("m", ["false"], url, state_dir=tmp_path / "serve")  # would fail if it ran
        assert not srv.started and srv.proc is None
        release("m")
        time.sleep(0.5)
        assert own.poll() is None and healthy(url), "a server we did not start was stopped"
    finally:
        os.killpg(own.pid, signal.SIGKILL)
        own.wait()


def test_health_timeout_is_one_line_naming_the_command_and_log_and_leaves_nothing(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/health"
    marker = tmp_path / "started"
    cmd = [sys.executable, "-c", f"import time, pathlib, os; pathlib.Path({str(marker)!r}).write_text(str(os.getpid()));"
                                 " time.sleep(120)"]
    t0 = time.monotonic()
    with pytest.raises(LisError) as e:
        ensure("slow", cmd, url, state_dir=tmp_path / "serve", startup_timeout_s=3)
    assert time.monotonic() - t0 < 30
    msg = e.value.one_line()
    assert "\n" not in msg
    assert f"did not answer {url} within 3 s" in msg and "time.sleep(120)" in msg
    assert str(tmp_path / "serve/slow.log") in msg and "startup_timeout_s" in msg
    assert wait_gone(int(marker.read_text())) and not server_process.in_use("slow")


def test_a_server_that_exits_is_one_line_with_its_exit_code(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/health"
    with pytest.raises(LisError) as e:
        ensure("bad", [sys.executable, "-c", "import sys; print('no GPU here'); sys.exit(3)"], url,
               state_dir=tmp_path / "serve", startup_timeout_s=60)
    assert "exited with code 3 before answering" in str(e.value)
    assert "no GPU here" in (tmp_path / "serve/bad.log").read_text()
    with pytest.raises(LisError, match="cannot run `no-such-server-program"):
        ensure("none", ["no-such-server-program"], url, state_dir=tmp_path / "serve")


def test_a_second_process_keeps_the_server_until_the_last_user_leaves(tmp_path):
    """Two processes (two Snakemake jobs) on one model: the one that started the server leaves
    first; the server stays for the other, which stops it when it leaves."""
    port, pids = free_port(), tmp_path / "pids.json"
    url = f"http://127.0.0.1:{port}/v1/models"
    srv = ensure("m", command(port, pids), url, state_dir=tmp_path / "serve", startup_timeout_s=60)
    assert srv.started
    go = tmp_path / "go"
    other = subprocess.Popen([sys.executable, "-c", f"""
import pathlib, sys, time
sys.path.insert(0, {str(ROOT)!r})
from lis.util.server_process import ensure, healthy
srv = ensure("m", ["false"], {url!r}, state_dir=pathlib.Path({str(tmp_path / 'serve')!r}))
print("started" if srv.started else "reused", flush=True)
while not pathlib.Path({str(go)!r}).exists():
    time.sleep(0.1)
print("healthy" if healthy({url!r}) else "down", flush=True)
"""], stdout=subprocess.PIPE, text=True)
    assert other.stdout.readline().strip() == "reused"
    release("m")  # we started it, but another process still uses it
    assert healthy(url)
    go.write_text("")
    assert other.stdout.readline().strip() == "healthy"
    assert other.wait(timeout=60) == 0  # the last user out stops it (atexit)
    p = json.loads(pids.read_text())
    assert wait_gone(p["server"], p["child"]) and not healthy(url)


def reapers(state_dir: Path, name: str) -> list[int]:
    """The reaper processes of the server ``name`` that still run."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"reap" in argv and str(state_dir).encode() in argv and name.encode() in argv and alive(int(d.name)):
            out.append(int(d.name))
    return out


def other_process(url: str, state: Path, *, linger_s: float, identity: str | None, cmd: list[str]) -> str:
    """Another process (the next Snakemake job) ensures and releases the server; returns started|reused."""
    r = subprocess.run([sys.executable, "-c", f"""
import pathlib, sys
sys.path.insert(0, {str(ROOT)!r})
from lis.util.server_process import ensure
srv = ensure("m", {cmd!r}, {url!r}, state_dir=pathlib.Path({str(state)!r}), startup_timeout_s=60,
             linger_s={linger_s!r}, identity={identity!r})
print("started" if srv.started else "reused", flush=True)
"""], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_a_lingering_server_serves_the_next_job_then_its_reaper_stops_it(tmp_path):
    """linger_s: the last user out leaves the server up; the next process reuses it (no second
    start), and once idle for linger_s the reaper stops the whole group and exits itself."""
    port, pids, state = free_port(), tmp_path / "pids.json", tmp_path / "serve"
    url = f"http://127.0.0.1:{port}/v1/models"
    cmd = command(port, pids)
    srv = ensure("m", cmd, url, state_dir=state, startup_timeout_s=60, linger_s=3, identity="w1")
    assert srv.started
    p = json.loads(pids.read_text())
    release("m")
    assert healthy(url) and alive(p["server"]) and reapers(state, "m"), "the last user out stopped a lingering server"
    assert "idle_since" in json.loads((state / "m.pid").read_text())
    assert other_process(url, state, linger_s=3, identity="w1", cmd=cmd) == "reused"
    assert (state / "m.log").read_text().count("lis starts:") == 1  # loaded once for both jobs
    assert wait_gone(p["server"], p["child"], timeout=30), "the reaper did not stop the idle server"
    assert wait_until(lambda: not (state / "m.pid").exists(), 15, "the record gone", interval=0.1, fail=False)
    assert not healthy(url)
    assert wait_until(lambda: not reapers(state, "m"), 15, "the reapers gone", interval=0.1, fail=False)
    assert "idle for 3 s: stopping it" in (state / "m.log").read_text()


def test_a_lingering_server_with_other_weights_is_restarted_not_reused(tmp_path):
    port, pids, state = free_port(), tmp_path / "pids.json", tmp_path / "serve"
    url = f"http://127.0.0.1:{port}/v1/models"
    cmd = command(port, pids)
    ensure("m", cmd, url, state_dir=state, startup_timeout_s=60, linger_s=60, identity="old-weights")
    first = json.loads(pids.read_text())["server"]
    release("m")
    assert healthy(url)
    srv = ensure("m", cmd, url, state_dir=state, startup_timeout_s=60, linger_s=60, identity="new-weights")
    assert srv.started and wait_gone(first), "a server with other weights was reused"
    assert json.loads((state / "m.pid").read_text())["identity"] == "new-weights"
    second = json.loads(pids.read_text())
    release_all(linger=False)  # what a cancelled process does: stop now, linger or not
    assert wait_gone(second["server"], second["child"]) and not healthy(url)
    assert wait_until(lambda: not reapers(state, "m"), 15, "the reapers gone", interval=0.1, fail=False)

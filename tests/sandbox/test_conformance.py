"""The Sandbox contract, run against every backend: the agent must find the same computer."""
from __future__ import annotations

import os
import threading
import time

import pytest

from tests.wait import wait_until

pytestmark = pytest.mark.docker


def test_identity_and_layout(sb):
    r = sb.exec("id -un; id -u; pwd; echo $HOME; test -w /testbed && echo writable")
    assert r.stdout.split() == ["sandbox", "1000", "/testbed", "/home/sandbox", "writable"], r
    assert sb.info["pid"] == 1 and sb.info["uid"] == 1000


def test_state_persists_between_calls(sb):
    assert sb.exec("cd /tmp && export LIS_X=42 && f() { echo \"fn $1\"; } && alias ll='ls -l'").exit_code == 0
    r = sb.exec("pwd; echo $LIS_X; f ok")
    assert r.stdout == "/tmp\n42\nfn ok\n"


def test_exit_codes_and_separate_streams(sb):
    r = sb.exec("echo out; echo err >&2; exit_with() { return $1; }; exit_with 3")
    assert (r.stdout, r.stderr, r.exit_code) == ("out\n", "err\n", 3)
    assert sb.exec("false").exit_code == 1
    assert sb.exec("if true; then").exit_code == 2  # a syntax error is a result, not a dead shell


def test_commands_do_not_read_the_protocol(sb):
    r = sb.exec("cat; read x; echo \"got[$x]\"", timeout=5)
    assert r.stdout == "got[]\n" and not r.timed_out


def test_timeout_kills_the_command_not_the_session(sb):
    sb.exec("cd /tmp && export KEEP=1")
    t0 = time.monotonic()
    r = sb.exec("sleep 100", timeout=1)
    assert r.timed_out and r.reason == "timeout" and not r.shell_restarted
    assert time.monotonic() - t0 < 5
    assert sb.exec("pwd; echo $KEEP").stdout == "/tmp\n1\n"  # the session survived with its state


def test_background_jobs_survive_a_later_timeout(sb):
    sb.exec("sleep 300 > /dev/null 2>&1 &")
    assert sb.exec("sleep 100", timeout=1).timed_out
    assert sb.exec("jobs -p | wc -l").stdout.strip() == "1"


def test_timeout_abandons_the_rest_of_the_command(sb):
    r = sb.exec("echo before; sleep 100; echo after", timeout=1)
    assert r.timed_out and r.stdout == "before\n"  # like Ctrl-C, or the paper's `timeout 120 bash -c`
    r = sb.exec("for i in 1 2 3; do sleep 100; echo $i; done", timeout=1)
    assert r.timed_out and r.stdout == "" and not r.shell_restarted


BLOCKED_HOST = """
import dataclasses, json, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)  # as for a command started with `&` by a script
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # inherited by every thread and child from here on
from lis.sandbox import Limits, SandboxConfig, make_sandbox
d = json.loads(sys.argv[1])
sb = make_sandbox(SandboxConfig(**{**d, "limits": Limits(**d["limits"])})).start()
try:
    r = sb.exec("echo before; sleep 100; echo after", timeout=1)
    print(json.dumps({"timed_out": r.timed_out, "stdout": r.stdout, "restarted": r.shell_restarted}))
finally:
    sb.close()
"""


def test_a_host_that_blocks_sigint_still_gets_timeouts_that_abandon_the_command(base_config, backend):
    """A signal mask goes through fork and exec: a sandbox started by a host process (or thread)
    with SIGINT blocked must still stop the rest of a command at its timeout (sandboxd unblocks)."""
    import dataclasses
    import json
    import subprocess
    import sys
    from pathlib import Path

    cfg = dataclasses.asdict(dataclasses.replace(base_config, backend=backend))
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "-c", BLOCKED_HOST, json.dumps(cfg)], capture_output=True, text=True,
                       timeout=120, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.splitlines()[-1]) == {"timed_out": True, "stdout": "before\n", "restarted": False}


def test_busy_builtin_loop_is_interrupted_without_losing_state(sb):
    sb.exec("cd /tmp && export KEEP=2")
    r = sb.exec("while :; do :; done", timeout=1)
    assert r.timed_out and not r.shell_restarted
    assert sb.exec("pwd; echo $KEEP").stdout == "/tmp\n2\n"


def test_shell_that_ignores_interrupts_is_restarted(sb):
    r = sb.exec("trap '' INT; while :; do :; done", timeout=1)
    assert r.timed_out and r.shell_restarted
    r = sb.exec("echo back; pwd")
    assert r.stdout == "back\n/testbed\n"


def test_exit_restarts_the_shell(sb):
    sb.exec("cd /tmp")
    r = sb.exec("exit 7")
    assert r.exit_code == 7 and r.shell_restarted and r.reason == "shell_exited"
    assert sb.exec("pwd").stdout == "/testbed\n"


def test_large_output_keeps_head_and_tail(sb):
    r = sb.exec("seq 1 400000")  # ~2.7 MB, over the 1 MB cap of these tests: stopped there
    assert r.output_limited and r.reason == "output_limit" and not r.timed_out
    assert len(r.stdout) <= (1 << 20) + (1 << 16) + 4096
    assert r.stdout.splitlines()[0] == "1"
    r = sb.exec("seq 1 400000 >&2; echo done", timeout=10)
    assert r.output_limited and r.stdout == ""  # the rest of the command is abandoned
    assert sb.exec("echo next").stdout == "next\n"


def test_output_under_the_cap_is_complete(sb):
    r = sb.exec("seq 1 50000")
    assert not r.output_limited and r.stdout.splitlines()[-1] == "50000" and len(r.stdout.splitlines()) == 50000


def test_binary_output_and_no_trailing_newline(sb):
    r = sb.exec("head -c 3000 /dev/urandom; printf 'END'")
    assert r.exit_code == 0 and r.stdout.endswith("END")
    assert sb.exec("printf 'a\\nb'").stdout == "a\nb"


def test_unicode_everywhere(sb):
    text = "héllo wörld — 你好 🙂"
    r = sb.exec(f"echo '{text}' > /testbed/u.txt; cat /testbed/u.txt; echo 'ünï' >&2")
    assert r.stdout == text + "\n" and r.stderr == "ünï\n"
    sb.write_file("/testbed/ü 名.txt", text)
    assert sb.read_file("/testbed/ü 名.txt").decode() == text
    assert sb.exec("cat '/testbed/ü 名.txt'").stdout == text


def test_ten_megabyte_file_round_trip(sb):
    data = os.urandom(10 << 20)
    sb.write_file("/testbed/blob.bin", data)
    assert sb.exec("stat -c %s /testbed/blob.bin").stdout.strip() == str(len(data))
    assert sb.read_file("/testbed/blob.bin") == data


def test_copy_in_and_out(sb, tmp_path):
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("A")
    (src / "sub" / "b.txt").write_text("B")
    sb.copy_in(src, "/testbed/documents")
    assert sb.exec("cat /testbed/documents/a.txt /testbed/documents/sub/b.txt").stdout == "AB"
    sb.exec("mkdir -p /testbed/output && echo result > /testbed/output/r.txt && ln -s /etc/passwd /testbed/output/evil")
    out = sb.copy_out("/testbed/output", tmp_path / "out")
    assert (out / "output" / "r.txt").read_text() == "result\n"
    assert not (out / "output" / "evil").exists()  # an absolute link out of the sandbox is not followed
    sb.put_files({"x/y.txt": "Y", "z.txt": "Z"}, "/testbed/documents")
    assert sb.exec("cat /testbed/documents/x/y.txt /testbed/documents/z.txt").stdout == "YZ"


def test_read_file_errors(sb):
    with pytest.raises(FileNotFoundError):
        sb.read_file("/testbed/nope")
    with pytest.raises(IsADirectoryError):
        sb.read_file("/testbed")
    sb.write_file("/testbed/big.txt", "x" * 5000)
    with pytest.raises(OSError, match="limit"):
        sb.read_file("/testbed/big.txt", max_bytes=100)
    with pytest.raises(OSError) as e:
        sb.write_file("/usr/evil", "x")
    assert e.value.errno in (13, 30)  # EACCES or EROFS: the system is read-only to the agent
    sb.exec("mkdir /testbed/locked && chmod 000 /testbed/locked")
    with pytest.raises(PermissionError):
        sb.read_file("/testbed/locked/x")


def test_concurrent_sandboxes_are_isolated(make):
    boxes = [make() for _ in range(4)]
    errors = []

    def work(i, box):
        try:
            box.exec(f"echo {i} > /testbed/who && sleep 0.2")
            assert box.exec("cat /testbed/who").stdout == f"{i}\n"
            assert "sleep" not in box.exec("ps -eo comm").stdout  # other sandboxes' processes are invisible
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i, b)) for i, b in enumerate(boxes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_close_is_idempotent_and_final(make):
    from lis.sandbox import SandboxError

    box = make()
    box.close()
    box.close()
    with pytest.raises(SandboxError, match="closed"):
        box.exec("echo hi")


def test_a_sandbox_outlives_the_thread_that_started_it(base_config, backend):
    """bwrap's --die-with-parent fires when the spawning *thread* exits: pools start sandboxes
    in short-lived threads, so this must not kill them."""
    import dataclasses

    from lis.sandbox import make_sandbox

    box = {}
    t = threading.Thread(target=lambda: box.setdefault("sb", make_sandbox(
        dataclasses.replace(base_config, backend=backend)).start()))
    t.start()
    t.join()
    time.sleep(0.5)
    try:
        assert box["sb"].exec("echo alive").stdout == "alive\n"
    finally:
        box["sb"].close()


def test_pool_hands_out_live_warm_sandboxes_fast(base_config, backend):
    import dataclasses

    from lis.sandbox import SandboxPool

    with SandboxPool(dataclasses.replace(base_config, backend=backend), max_concurrent=2, warm=2) as pool:
        wait_until(lambda: pool.ready >= 2, 30, "two warm sandboxes in the pool")
        time.sleep(0.3)
        t0 = time.monotonic()
        with pool.sandbox() as sb:
            took = time.monotonic() - t0
            assert sb.exec("echo warm").stdout == "warm\n"
        assert took < 0.05, f"acquire from the warm pool took {took * 1000:.0f} ms"


def test_a_caller_waiting_for_a_full_pool_stops_when_the_pool_closes(base_config, backend):
    """A run that ends (Inspect's task clean-up, Ctrl-C) closes its pool: a sample still waiting for a
    slot must not start a sandbox nobody will use, nor wait for good."""
    import dataclasses
    import threading

    from lis.sandbox import SandboxError, SandboxPool

    pool = SandboxPool(dataclasses.replace(base_config, backend=backend), max_concurrent=1)
    held = pool.acquire()
    got: dict = {}
    waiter = threading.Thread(target=lambda: got.update(r=_try(pool.acquire)), daemon=True)
    waiter.start()
    time.sleep(0.5)
    assert waiter.is_alive()  # the pool is full: it waits
    pool.close()
    waiter.join(timeout=5)
    assert not waiter.is_alive() and isinstance(got["r"], SandboxError) and "closed" in str(got["r"])
    pool.release(held)


def _try(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the test looks at what it raised
        return e


def test_pool_spreads_sandboxes_over_engines(base_config):
    """Two engine URLs (here two names of the local engine's socket): new sandboxes go to the one
    with the fewest live sandboxes."""
    import dataclasses

    from lis.sandbox import SandboxPool

    engines = ["unix:///var/run/docker.sock", "unix:///run/docker.sock"]
    with SandboxPool(dataclasses.replace(base_config, backend="docker"), max_concurrent=4, engines=engines) as pool:
        boxes = [pool.acquire() for _ in range(4)]
        try:
            used = sorted(b.config.engine for b in boxes)
            assert used == sorted(engines * 2)
            assert all(b.exec("echo ok").stdout == "ok\n" for b in boxes)
        finally:
            for b in boxes:
                pool.release(b)
        assert pool._load == {e: 0 for e in engines}


def test_a_pool_of_either_backend_removes_a_sandbox_a_killed_run_created_but_never_started(base_config, backend,
                                                                                             docker_client):
    """SIGKILL between `create` and `start` leaves a container with no connection to lose (so
    StdinOnce and auto_remove never fire): the next pool on this machine, on any backend, removes it."""
    import dataclasses
    import socket
    import subprocess

    from lis.sandbox.labels import sandbox_labels
    from lis.sandbox import SandboxPool

    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid whose process is gone
    labels = {**sandbox_labels(base_config, backend="docker"), "lis.owner": f"{socket.gethostname()}:{dead.pid}"}
    created = docker_client.api.create_container(base_config.image, ["sleep", "60"], labels=labels,
                                                 name=f"lis-{base_config.run_id}-never-started-{backend}")
    try:
        assert docker_client.api.inspect_container(created["Id"])["State"]["Status"] == "created"
        with SandboxPool(dataclasses.replace(base_config, backend=backend), max_concurrent=1):
            pass
        assert not docker_client.api.containers(all=True, filters={"id": created["Id"]})
    finally:
        try:
            docker_client.api.remove_container(created["Id"], force=True)
        except Exception:
            pass

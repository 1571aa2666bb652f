"""The host-wide admission of sandbox starts (lis/sandbox/admission.py): three processes starting 24
sandboxes each, 8 at a time, never have more than `max_starting` sandboxes starting nor more than
`max_starts_per_s` created in any second — read from the Docker engine's own events — and none fails."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid

import pytest

from tests.conftest import ROOT
from tests.wait import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MAX_STARTING, PER_S = 3, 6


def test_three_processes_share_the_start_limits(docker_client, image_tag):
    run_id = "adm-" + uuid.uuid4().hex[:8]
    # the engine keeps only its last 256 events: listen from before the first start
    stream = docker_client.api.events(decode=True, filters={"label": [f"lis.run={run_id}"], "type": ["container"]})
    events: list[dict] = []
    listener = threading.Thread(target=lambda: events.extend(e for e in stream), daemon=True)
    listener.start()
    procs = [subprocess.Popen([sys.executable, "-m", "tests.sandbox.admission_worker", run_id, image_tag, "24", "8",
                               str(MAX_STARTING), str(PER_S)], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]

    def seen(action: str) -> int:
        return sum(1 for e in list(events) if e.get("Action") == action)

    # the last events arrive (every start is in the workers' output: 72 of each, unless one failed)
    wait_until(lambda: seen("create") >= 72 and seen("start") >= 72, 10, "the engine's events", interval=0.05,
               fail=False)
    stream.close()
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    assert all(o[0].startswith("started 24") for o in outs), outs
    created = sorted(e["timeNano"] / 1e9 for e in events if e.get("Action") == "create")
    started = {e["id"]: e["timeNano"] / 1e9 for e in events if e.get("Action") == "start"}
    create_of = {e["id"]: e["timeNano"] / 1e9 for e in events if e.get("Action") == "create"}
    assert len(created) == 72 and len(started) == 72, (len(created), len(started))
    # starting = from its creation to its start: never more than MAX_STARTING at once
    edges = sorted([(t, 1) for t in create_of.values()] + [(started[c], -1) for c in create_of])
    at_once = peak = 0
    for _, d in edges:
        at_once += d
        peak = max(peak, at_once)
    assert peak <= MAX_STARTING, peak
    # created in any one second: never more than PER_S
    busiest = max(sum(1 for t in created if s <= t < s + 1.0) for s in created)
    assert busiest <= PER_S, busiest
    assert created[-1] - created[0] >= (72 / PER_S) - 2  # the rate held them back (72 starts at 6/s: ≥ 10 s)


SIGNAL_REPEATS = int(os.environ.get("LIS_SIGNAL_REPEATS") or 12)  # scripts: 50 (the sandbox docs' figure)


def test_a_signal_at_any_moment_of_a_start_leaves_no_container(docker_client, image_tag):
    """SIGINT at varied delays into a loop of starts in three threads (so it lands in every part of a start: the
    create call, between create and start, the attach, the hello): 1 s after the process ends, no container of its
    run is left, created-never-started ones included. Each repeat: a fresh process and run id."""
    import random
    import signal

    rng = random.Random(0)
    left = []
    for k in range(SIGNAL_REPEATS):
        run_id = f"sigstart-{uuid.uuid4().hex[:8]}"
        proc = subprocess.Popen([sys.executable, "-m", "tests.sandbox.signal_start_worker", run_id, image_tag], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read()[-2000:]
            time.sleep(rng.uniform(0.05, 1.5))
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        time.sleep(1.0)
        found = docker_client.containers.list(all=True, sparse=True, filters={"label": [f"lis.run={run_id}"]})
        if found:
            left.append((k, [c.id[:12] for c in found]))
            for c in found:
                c.remove(force=True)
    assert not left, f"{len(left)} of {SIGNAL_REPEATS} runs left containers: {left}"


def test_a_signal_while_another_threads_create_call_is_in_flight_leaves_no_container(docker_client, image_tag,
                                                                                     tmp_path):
    """SIGINT while a worker thread's create request is on its way to the engine (a relay holds it 1.5 s): the
    signal's clean-up waits for the engine's answer and removes the container, so the process ending (its daemon
    threads with it) does not leave a created, never-started container behind."""
    import signal

    from tests.sandbox.slow_engine import SlowEngine

    relay = SlowEngine(str(tmp_path / "engine.sock"), delay_s=1.5)
    run_id = f"sigcreate-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen([sys.executable, "-m", "tests.sandbox.signal_during_create_worker", run_id, image_tag,
                             relay.url], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started", proc.stderr.read()[-2000:]
        assert relay.creates_seen.wait(30), "no create request reached the relay"
        proc.stdin.write("go\n")
        proc.stdin.flush()
        proc.wait(timeout=60)
        assert proc.returncode in (-signal.SIGINT, 128 + signal.SIGINT), (proc.returncode, proc.stderr.read()[-2000:])
        time.sleep(2.5)  # the held request has reached the engine by now
        found = docker_client.containers.list(all=True, sparse=True, filters={"label": [f"lis.run={run_id}"]})
        for c in found:
            c.remove(force=True)
        assert not found, f"the run left {len(found)} container(s)"
    finally:
        if proc.poll() is None:
            proc.kill()
        relay.close()

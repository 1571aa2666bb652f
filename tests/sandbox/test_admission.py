"""The host-wide admission of sandbox starts (lis/sandbox/admission.py): three processes starting 24
sandboxes each, 8 at a time, never have more than `max_starting` sandboxes starting nor more than
`max_starts_per_s` created in any second — read from the Docker engine's own events — and none fails."""
from __future__ import annotations

import subprocess
import sys
import threading
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

"""No container survives a server run: SIGTERM cancels the running episodes and removes their
sandboxes before the process ends; after SIGKILL the next server's start-up sweep removes what an
earlier server run left (and nothing of a live server's, nor any other container)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

import openai
import pytest

from lis.models.server import ChatServer
from tests.serve.server import containers, serving, start_serve, stop
from tests.serve.test_limits import ASK, in_thread, sleeper, wait_for

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_sigterm_cancels_episodes_and_leaves_no_container(tmp_path, docker_client, image_tag):
    with ChatServer(sleeper()) as up:
        srv = start_serve(up.base_url, tmp_path)
        client = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0, timeout=90)
        t, box = in_thread(lambda: client.chat.completions.create(model="lis-agent", messages=ASK))
        wait_for(lambda: containers(docker_client, srv.run_label), 30, "the episode's sandbox")
        t0 = time.monotonic()
        status = stop(srv, signal.SIGTERM, timeout=30)
        assert time.monotonic() - t0 < 20  # not after the 60 s command
        assert status == 143  # 128 + SIGTERM, as every long lis command ends on it, after its clean-up
        assert containers(docker_client, srv.run_label) == []
        t.join(10)
        err = box.get("error")
        assert isinstance(err, openai.APIStatusError) and err.status_code == 503, box
        assert "shutting down" in err.body["message"]
        log = srv.log_text()
        assert "shutting down: 1 running episode(s) cancelled" in log
        assert "Traceback" not in log
        # a server's normal end: it says it stopped and what it served (not "interrupted; run again to resume")
        assert log.rstrip().splitlines()[-1] == "lis serve: stopped; episodes served: 1, cancelled by the stop: 1", \
            log[-500:]


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_sigkill_then_next_startup_sweep_leaves_no_container(tmp_path, docker_client, image_tag):
    host = socket.gethostname()
    planted = []
    try:
        with ChatServer(sleeper()) as up:
            first = start_serve(up.base_url, tmp_path)
            client = openai.OpenAI(base_url=first.base_url, api_key="x", max_retries=0, timeout=60)
            in_thread(lambda: client.chat.completions.create(model="lis-agent", messages=ASK))
            wait_for(lambda: containers(docker_client, first.run_label), 30, "the episode's sandbox")
            stop(first, signal.SIGKILL)
            # what a lost server leaves, as a sandbox that has not stopped by itself: labelled with an earlier
            # server run whose process is gone ...
            left = docker_client.containers.run(image_tag, ["sleep", "300"], detach=True, network_mode="none",
                                                labels={"lis.managed": "true", "lis.run": "serve-lost0run",
                                                        "lis.owner": f"{host}:{dead_pid()}",
                                                        "lis.expires": str(int(time.time()) + 3600)})
            # ... and two that must stay: a live server's sandbox (its owner runs) and an unlabelled container
            live = docker_client.containers.run(image_tag, ["sleep", "300"], detach=True, network_mode="none",
                                                labels={"lis.managed": "true", "lis.run": "serve-alive0run",
                                                        "lis.owner": f"{host}:{os.getpid()}",
                                                        "lis.expires": str(int(time.time()) + 3600)})
            bystander = docker_client.containers.run(image_tag, ["sleep", "300"], detach=True, network_mode="none")
            planted = [left, live, bystander]
            # another process's orphan sweep (the suite's other worker starting a pool) judges by the same rule
            # and may take the lost server's sandboxes first: the second server names those it finds
            lost = {c.id for c in containers(docker_client, first.run_label) + containers(docker_client, "serve-lost0run")}
        with ChatServer(sleeper()) as up, serving(up.base_url, tmp_path) as second:
            assert containers(docker_client, first.run_label) == []
            assert containers(docker_client, "serve-lost0run") == []
            log = second.log_text()
            if lost:
                assert "start-up sweep: removed" in log or "no sandbox left by earlier server runs" in log, log
            if left.id in lost and "start-up sweep: removed" in log:
                assert left.name in log, log
            live.reload()
            bystander.reload()
            assert live.status == "running" and bystander.status == "running"
    finally:
        for c in planted:
            try:
                c.remove(force=True)
            except Exception:  # noqa: BLE001 - already removed by the sweep
                pass

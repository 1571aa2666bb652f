"""Limits of `lis serve`: a full server answers 429 at once, a queued request waits for its slot,
and a client that goes away ends its episode and removes its sandbox (blocking and streaming)."""
from __future__ import annotations

import json
import threading
import time

import httpx
import openai
import pytest

from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.models.server import ChatServer
from tests.serve.server import containers, serving, solve

pytestmark = [pytest.mark.docker, pytest.mark.slow]
ASK = [{"role": "user", "content": "what is 6*7?"}]


def wait_for(cond, timeout: float, what: str, step: float = 0.1):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(step)


def in_thread(fn):
    box: dict = {}

    def run():
        try:
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


def test_full_server_answers_429(tmp_path, image_tag):
    with ChatServer(ScriptedModel([solve()] * 3, name="replay", latency_s=4)) as up, \
            serving(up.base_url, tmp_path, "--max-concurrent", "1", "--max-queue", "0") as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        t, box = in_thread(lambda: client.chat.completions.create(model="lis-agent", messages=ASK))
        wait_for(lambda: srv.health()["running"] == 1, 30, "the first episode")
        t0 = time.monotonic()
        with pytest.raises(openai.RateLimitError) as e:
            client.chat.completions.create(model="lis-agent", messages=ASK)
        assert time.monotonic() - t0 < 2  # at once, not after the running episode
        assert e.value.status_code == 429 and e.value.body["code"] == "server_busy"
        assert "serve.max_concurrent=1" in e.value.body["message"]
        assert e.value.response.headers["retry-after"] == "5"
        t.join(60)
        assert box["result"].choices[0].message.content == "42"  # the running one was not disturbed
        h = srv.health()
        assert h["counts"]["rejected"] == 1 and h["counts"]["submitted"] == 1 and h["running"] == 0
        assert len(up.requests) == 1


def test_queued_request_waits_for_a_slot(tmp_path, image_tag):
    with ChatServer(ScriptedModel([solve("first"), solve("second")], name="replay", latency_s=3)) as up, \
            serving(up.base_url, tmp_path, "--max-concurrent", "1", "--max-queue", "1") as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        a, box_a = in_thread(lambda: client.chat.completions.create(model="lis-agent", messages=ASK))
        wait_for(lambda: srv.health()["running"] == 1, 30, "the first episode")
        b, box_b = in_thread(lambda: client.chat.completions.create(model="lis-agent", messages=ASK))
        wait_for(lambda: srv.health()["queued"] == 1, 10, "the second request to queue")
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="lis-agent", messages=ASK)
        a.join(60)
        b.join(60)
        assert box_a["result"].choices[0].message.content == "first"
        assert box_b["result"].choices[0].message.content == "second"
        assert srv.health()["counts"]["submitted"] == 2


def sleeper() -> ScriptedModel:
    """An upstream whose episode runs `sleep 60` in the sandbox (a client gives up long before)."""
    return ScriptedModel([assistant(None, tool_call("execute_bash", {"command": "sleep 60"})),
                          assistant(None, tool_call("submit", {}))], name="replay")


def cancelled_record(srv) -> dict:
    recs = [json.loads(p.read_text()) for p in srv.files_dir.glob("*/trajectory.json")]
    assert len(recs) == 1
    return recs[0]


def test_client_disconnect_ends_episode_and_sandbox(tmp_path, docker_client, image_tag):
    with ChatServer(sleeper()) as up, serving(up.base_url, tmp_path) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0, timeout=8)
        t, box = in_thread(lambda: client.chat.completions.create(model="lis-agent", messages=ASK))
        wait_for(lambda: containers(docker_client, srv.run_label), 30, "the episode's sandbox")
        t.join(30)
        assert isinstance(box.get("error"), openai.APITimeoutError)  # the client hung up after 8 s
        gone_at = time.monotonic()
        wait_for(lambda: not containers(docker_client, srv.run_label), 15, "the sandbox to be removed", 0.2)
        wait_for(lambda: srv.health()["running"] == 0, 15, "the episode to end")
        assert time.monotonic() - gone_at < 15  # not after the 60 s command
        rec = cancelled_record(srv)
        assert rec["termination"] == "interrupted" and "the client disconnected" in rec["error"]
        assert srv.health()["counts"] == {"requests": 1, "interrupted": 1, "episodes": 1}
        assert len(up.requests) == 1  # no model call after the cancellation
    assert "stopping (the client disconnected)" in srv.log_text()


def test_streaming_client_disconnect_ends_episode_and_sandbox(tmp_path, docker_client, image_tag):
    with ChatServer(sleeper()) as up, serving(up.base_url, tmp_path) as srv:
        body = {"model": "lis-agent", "messages": ASK, "stream": True}
        with httpx.stream("POST", f"{srv.base_url}/chat/completions", json=body, timeout=30) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            first = next(r.iter_lines())
            assert json.loads(first.removeprefix("data: "))["choices"][0]["delta"]["role"] == "assistant"
            wait_for(lambda: containers(docker_client, srv.run_label), 30, "the episode's sandbox")
        gone_at = time.monotonic()  # the stream is closed: the client went away
        wait_for(lambda: not containers(docker_client, srv.run_label), 15, "the sandbox to be removed", 0.2)
        wait_for(lambda: srv.health()["running"] == 0, 15, "the episode to end")
        assert time.monotonic() - gone_at < 15
        rec = cancelled_record(srv)
        assert rec["termination"] == "interrupted" and "the client disconnected" in rec["error"]

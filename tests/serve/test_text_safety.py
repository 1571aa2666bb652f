"""`lis serve` against an upstream whose every turn carries lone surrogates (in the assistant's text,
tool arguments, editor text and an argument's key), and a client whose request carries one: every
request is answered, no slot is lost (`/health` shows 0 running after 20 of them), and SIGTERM
stops the server within 5 s. Before, each such request went unanswered and kept its slot until a
restart (8 wedged a default server), and SIGTERM took 12 s."""
from __future__ import annotations

import copy
import json
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from lis.models.base import ChatResult, Usage
from lis.models.scripted import ScriptedModel
from lis.models.server import ChatServer
from tests.serve.server import start_serve, stop
from tests.surrogates import FFFD, S, SANDBOX_INVALID, TEXT_ONLY_INVALID, sandbox_replies, text_only_replies

pytestmark = [pytest.mark.docker, pytest.mark.slow]
N = 20


class ByTurn(ScriptedModel):
    """Each conversation gets its script in order, whatever runs beside it: text_only_replies() when
    the task says "quiet", else sandbox_replies(); the reply is chosen by how many assistant turns
    the conversation already has."""

    def __init__(self):
        super().__init__([], name="replay")

    def chat(self, messages, tools=None, sampling=None):
        script = text_only_replies() if "quiet" in json.dumps(messages[:2]) else sandbox_replies()
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        msg = copy.deepcopy(script[min(turn, len(script) - 1)])
        return ChatResult(message=msg, usage=Usage(100, 10, 0), latency_s=0.0,
                          finish_reason="tool_calls" if msg.get("tool_calls") else "stop")


def test_surrogates_neither_wedge_nor_slow_the_server(tmp_path, image_tag):
    with ChatServer(ByTurn()) as up:
        srv = start_serve(up.base_url, tmp_path, "--max-concurrent", "4")
        try:
            def ask(i: int) -> httpx.Response:
                text = f"task {i}{S if i % 2 else ''}: write 42"  # odd ones: the client's text has one too
                text += " (quiet)" if i % 4 == 2 else ""  # these: surrogates only in text, reasoning and a key
                body = {"model": "lis-agent", "messages": [{"role": "user", "content": text}]}
                return httpx.post(f"{srv.base_url}/chat/completions", content=json.dumps(body).encode(),
                                  headers={"Content-Type": "application/json"}, timeout=60)

            with ThreadPoolExecutor(4) as pool:
                answers = list(pool.map(ask, range(N)))
            assert [a.status_code for a in answers] == [200] * N, answers[0].text[:500]
            for a in answers:
                data = a.json()
                assert data["choices"][0]["message"]["content"] == "42"
                assert data["lis"]["termination"] == "submitted"
            health = srv.health()
            assert health["running"] == 0 and health["queued"] == 0 and health["counts"]["submitted"] == N
            tid = answers[0].json()["lis"]["trajectory_id"]
            rec = httpx.get(f"{srv.base_url}/trajectories/{tid}", timeout=10).json()
            assert rec["invalid_text"] == SANDBOX_INVALID and FFFD in rec["steps"][0]["content"]
            odd = httpx.get(f"{srv.base_url}/trajectories/{answers[1].json()['lis']['trajectory_id']}", timeout=10)
            assert f"task 1{FFFD}: write 42" in odd.json()["messages"][1]["content"]  # the client's, made safe
            quiet = httpx.get(f"{srv.base_url}/trajectories/{answers[2].json()['lis']['trajectory_id']}",
                              timeout=10).json()
            assert quiet["invalid_text"] == TEXT_ONLY_INVALID and quiet["termination"] == "submitted"
            editor = httpx.get(f"{srv.base_url}/files/{tid}/editor.txt", timeout=10)
            assert editor.content.decode("utf-8") == f"x{FFFD}y\n"
        finally:
            t0 = time.monotonic()
            status = stop(srv, signal.SIGTERM, timeout=60)
            took = time.monotonic() - t0
    print(f"MEASURED lis serve exit after SIGTERM: {took:.2f} s")
    assert status == 128 + signal.SIGTERM and took < 5, (took, srv.log_text()[-2000:])  # 143, as every lis command

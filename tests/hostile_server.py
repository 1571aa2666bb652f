"""A hostile OpenAI-compatible model server (stdlib only), for the tests of what lis does when the
upstream misbehaves. Each chat request is answered by the next behaviour of its script (the last
one repeats):

    trickle         a valid reply, one byte every ``gap_s`` (an overloaded gateway)
    hang            headers never come
    500             HTTP 500 with a JSON error
    invalid_json    200, a body that is not JSON
    empty           200, an empty body
    empty_choices   200, ``{"choices": []}``
    huge            200, a reply whose content is ``huge_bytes`` long
    many_calls      200, 200 tool calls in one turn
    bad_arguments   200, a tool call whose arguments are not JSON
    non_utf8        200, a body with bytes that are not UTF-8 in the content
    submit          200, a valid reply that writes the answer file and submits
    text            200, a valid reply without tool calls

    with HostileServer(["invalid_json", "submit"]) as srv:
        ... srv.base_url ...              # http://127.0.0.1:PORT/v1
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BEHAVIOURS = ("trickle", "hang", "500", "invalid_json", "empty", "empty_choices", "huge", "many_calls",
              "bad_arguments", "non_utf8", "submit", "text")


def completion(message: dict, finish: str = "stop") -> dict:
    return {"id": "chatcmpl-hostile", "object": "chat.completion", "created": 0, "model": "hostile",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def call(name: str, arguments: str, i: int = 0) -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}


SUBMIT = completion({"role": "assistant", "content": None, "tool_calls": [
    call("execute_bash", json.dumps({"command": "echo 42 > /testbed/output/answer.txt 2>/dev/null || "
                                                "echo 42 > /testbed/answer.txt"}), 0),
    call("submit", "{}", 1)]}, "tool_calls")


class HostileServer:
    def __init__(self, script: list[str], gap_s: float = 5.0, huge_bytes: int = 20 << 20):
        unknown = [b for b in script if b not in BEHAVIOURS]
        if unknown:
            raise ValueError(f"unknown behaviour(s) {unknown}")
        self.script = list(script)
        self.gap_s = gap_s
        self.huge_bytes = huge_bytes
        self.requests = 0
        self.served: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):  # /v1/models
                self._send(200, json.dumps({"object": "list", "data": [{"id": "hostile"}]}).encode())

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with server._lock:
                    n = server.requests
                    server.requests += 1
                    behaviour = server.script[min(n, len(server.script) - 1)]
                    server.served.append(behaviour)
                getattr(server, "_" + behaviour)(self)

            def _send(self, status: int, body: bytes, headers: dict | None = None):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client stopped reading (a reply over its cap): what the tests want
                    pass

        self._handler = Handler
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    # -- behaviours ----------------------------------------------------------------------------------
    def _trickle(self, h):
        body = json.dumps(SUBMIT).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.flush()
        try:
            for i in range(len(body)):
                h.wfile.write(body[i:i + 1])
                h.wfile.flush()
                if self._stop.wait(self.gap_s):
                    return
        except OSError:  # the client gave up: what the tests want
            pass

    def _hang(self, h):
        self._stop.wait(3600)

    def _500(self, h):
        h._send(500, json.dumps({"error": {"message": "hostile: internal error"}}).encode())

    def _invalid_json(self, h):
        h._send(200, b'{"choices": [{"message": {"content": "half')

    def _empty(self, h):
        h._send(200, b"")

    def _empty_choices(self, h):
        h._send(200, json.dumps({"id": "x", "object": "chat.completion", "choices": []}).encode())

    def _huge(self, h):
        h._send(200, json.dumps(completion({"role": "assistant", "content": "x" * self.huge_bytes})).encode())

    def _many_calls(self, h):
        calls = [call("execute_bash", json.dumps({"command": f"echo {i}"}), i) for i in range(200)]
        h._send(200, json.dumps(completion({"role": "assistant", "content": None, "tool_calls": calls},
                                           "tool_calls")).encode())

    def _bad_arguments(self, h):
        h._send(200, json.dumps(completion({"role": "assistant", "content": None,
                                            "tool_calls": [call("execute_bash", "{not json")]}, "tool_calls")).encode())

    def _non_utf8(self, h):
        body = json.dumps(completion({"role": "assistant", "content": "PLACEHOLDER"})).encode()
        h._send(200, body.replace(b"PLACEHOLDER", b"caf\xe9 \xff\xfe done"))

    def _submit(self, h):
        h._send(200, json.dumps(SUBMIT).encode())

    def _text(self, h):
        h._send(200, json.dumps(completion({"role": "assistant", "content": "I am done."})).encode())

    # -- life cycle ----------------------------------------------------------------------------------
    def start(self) -> "HostileServer":
        threading.Thread(target=self.httpd.serve_forever, daemon=True, name="hostile-server").start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "HostileServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def wait_s(t0: float) -> float:
    return time.monotonic() - t0

"""An OpenAI-compatible HTTP server around any ChatModel (``/v1/chat/completions``, ``/v1/models``).

Real HTTP on a local port, so clients (the agent's OpenAI backend, the LLM judge) are tested
against a real server. With a ScriptedModel it is a deterministic stand-in for vLLM; with a
local transformers model it serves that model. Non-streaming only.

    with ChatServer(model) as srv:
        client = OpenAI(base_url=srv.base_url, api_key="x")
"""
from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lis.models.base import ChatModel, ContextLengthError, ModelError, Sampling


class ChatServer:
    def __init__(self, model: ChatModel, host: str = "127.0.0.1", port: int = 0,
                 fail_first: int = 0, fail_status: int = 429, fail_body: dict[str, Any] | None = None,
                 fail_headers: dict[str, str] | None = None):
        """``fail_first``: answer the first N chat requests with ``fail_status``, the JSON
        ``fail_body`` (default: an OpenAI-style "injected failure" error) and ``fail_headers``
        (e.g. ``Retry-After``) — tests of retries and of error handling."""
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []  # wall-clock arrival of each chat request (time.time())
        self._fail_left = fail_first
        self._fail_status = fail_status
        self._fail_body = fail_body or {"error": {"message": "injected failure"}}
        self._fail_headers = dict(fail_headers or {})
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model.name, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self):
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                length = int(self.headers.get("Content-Length", 0))
                try:
                    req = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    return self._send(400, {"error": {"message": "body is not JSON"}})
                with server._lock:
                    server.requests.append(req)
                    server.request_times.append(time.time())
                    if server._fail_left > 0:
                        server._fail_left -= 1
                        return self._send(server._fail_status, server._fail_body, server._fail_headers)
                sampling = Sampling(temperature=req.get("temperature"), top_p=req.get("top_p"),
                                    top_k=req.get("top_k"), repetition_penalty=req.get("repetition_penalty"),
                                    max_tokens=req.get("max_tokens"), seed=req.get("seed"))
                try:
                    res = server.model.chat(req.get("messages", []), req.get("tools"), sampling)
                except ContextLengthError as e:  # as vLLM answers it, so clients can tell it apart
                    return self._send(400, {"error": {"message": f"maximum context length exceeded: {e}",
                                                      "type": "BadRequestError", "code": 400}})
                except ModelError as e:
                    return self._send(500, {"error": {"message": str(e)}})
                msg = {k: v for k, v in res.message.items() if v is not None}
                msg.setdefault("content", None)
                self._send(200, {
                    "id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
                    "model": req.get("model", server.model.name),
                    "choices": [{"index": 0, "message": msg, "finish_reason": res.finish_reason or "stop"}],
                    "usage": {"prompt_tokens": res.usage.prompt_tokens or 0,
                              "completion_tokens": res.usage.completion_tokens or 0,
                              "total_tokens": (res.usage.prompt_tokens or 0) + (res.usage.completion_tokens or 0),
                              "prompt_tokens_details": {"cached_tokens": res.usage.cached_tokens or 0}},
                })

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "ChatServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> "ChatServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

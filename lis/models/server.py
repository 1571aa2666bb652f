"""An OpenAI-compatible HTTP server around any ChatModel (``/v1/chat/completions``, ``/v1/models``).

Real HTTP on a local port, so clients (the agent's OpenAI backend, the LLM judge) are tested
against a real server: with a ScriptedModel a deterministic stand-in for vLLM. Non-streaming only.

With a local transformers model (one that has ``engine`` and ``tokenizer``) it also answers
``/v1/completions`` for token-id prompts the way vLLM does (the fields :mod:`lis.models.vllm_tokens`
sends), batched by the model's engine; ``/v1/models`` then reports ``max_model_len``. As vLLM
(``--generation-config auto``), a sampling field the request leaves out takes the model's
``sampling``, else its ``generation_config.json`` value.

    with ChatServer(model) as srv:
        client = OpenAI(base_url=srv.base_url, api_key="x")
"""
from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from lis.models.base import ChatModel, ContextLengthError, ModelError, Sampling
from lis.util import cancel


class ChatServer:
    def __init__(self, model: ChatModel, host: str = "127.0.0.1", port: int = 0,
                 fail_first: int = 0, fail_status: int = 429, fail_body: dict[str, Any] | None = None,
                 fail_headers: dict[str, str] | None = None, request_log: str | Path | None = None):
        """``fail_first``: answer the first N chat requests with ``fail_status``, the JSON
        ``fail_body`` (default: an OpenAI-style "injected failure" error) and ``fail_headers``
        (e.g. ``Retry-After``) — tests of retries and of error handling. ``request_log``: a JSONL
        file that gets ``{"body": ..., "applied": ...}`` per token completion (``applied``: the
        sampling settings it drew with, ``self.applied`` holds the same in this process)."""
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.applied: list[dict[str, Any]] = []  # per token completion: the sampling settings it drew with
        self._request_log = Path(request_log) if request_log is not None else None
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
                if self.path.rstrip("/") == "/health":  # vLLM's liveness route (launchers wait on it)
                    self._send(200, {})
                elif self.path.rstrip("/").endswith("/models"):
                    card = {"id": server.model.name, "object": "model", "created": int(time.time()),
                            "owned_by": "lis", "root": server.model.name}
                    if isinstance(getattr(server.model, "max_context", None), int):
                        card["max_model_len"] = server.model.max_context
                    self._send(200, {"object": "list", "data": [card]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self):
                path = self.path.rstrip("/")
                if path != "/lis/load_weights" and not path.endswith("/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                length = int(self.headers.get("Content-Length", 0))
                try:
                    req = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    return self._send(400, {"error": {"message": "body is not JSON"}})
                if path == "/lis/load_weights":  # a trainer pushing its new weights (grpo.vllm.sync: files)
                    return self._send(*load_weights(server.model, req))
                with server._lock:
                    server.requests.append(req)
                    server.request_times.append(time.time())
                    if server._fail_left > 0:
                        server._fail_left -= 1
                        return self._send(server._fail_status, server._fail_body, server._fail_headers)
                if not path.endswith("/chat/completions"):
                    applied: dict[str, Any] = {}
                    try:
                        answer = token_completion(server.model, req, applied)
                    except (TypeError, ValueError) as e:  # a field of the wrong type
                        answer = _vllm_error(400, f"invalid request ({type(e).__name__}: {e})")
                    server._record(req, applied)
                    return self._send(*answer)
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

    def _record(self, req: dict[str, Any], applied: dict[str, Any]) -> None:
        with self._lock:
            self.applied.append(applied)
            if self._request_log is not None:
                with self._request_log.open("a") as f:
                    f.write(json.dumps({"body": req, "applied": applied or None}) + "\n")

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


def load_weights(model: Any, req: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(status, body) of ``POST /lis/load_weights`` ``{"path": ".../model.safetensors"}``: the served
    local model takes the weights in that file, which must hold all of them but a tied output layer
    (the weight sync of GRPO's server mode without vLLM, :mod:`lis.train.grpo.vllm_server`). Push with
    no request in flight (as TRL pushes into vLLM): one decoding meanwhile would mix old and new weights."""
    import torch
    from safetensors.torch import load_file

    inner = getattr(model, "model", None)
    if inner is None or not hasattr(inner, "load_state_dict"):
        return _vllm_error(404, f"model {getattr(model, 'name', '?')} takes no weights")
    path = req.get("path")
    if not isinstance(path, str) or not Path(path).is_file():
        return _vllm_error(400, f"no weights file at {path!r}", "path")
    state = load_file(path)
    own = inner.state_dict()
    unknown = sorted(set(state) - set(own))
    missing = sorted(k for k in set(own) - set(state) if not (k == "lm_head.weight" and inner.config.tie_word_embeddings))
    if unknown or missing:
        return _vllm_error(400, f"weights do not match the served model (unknown {unknown[:3]}, missing {missing[:3]})",
                           "path")
    with torch.no_grad():
        for k, v in state.items():
            own[k].copy_(v.to(own[k].dtype))
    if hasattr(model, "weights_changed"):
        model.weights_changed()
    return 200, {"loaded": len(state), "path": path}


def _vllm_error(status: int, message: str, param: str | None = None) -> tuple[int, dict[str, Any]]:
    """An error answer in vLLM's shape (``{"error": {message, type, param, code}}``)."""
    kind = {400: "BadRequestError", 404: "NotFoundError", 503: "ServiceUnavailableError"}.get(status,
                                                                                            "InternalServerError")
    return status, {"error": {"message": message, "type": kind, "param": param, "code": status}}


def token_completion(model: Any, req: dict[str, Any],
                     applied: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    """(status, body) of a ``/v1/completions`` request with token-id prompts, answered as vLLM does
    (non-streaming, ``n`` = 1, ``logprobs`` None or 0): one choice per prompt, all generated at
    once through the model's batching engine. ``applied`` (given) gets the sampling settings the
    prompts are drawn with (the request's, else the model's generation config's)."""
    if not (hasattr(model, "engine") and hasattr(model, "tokenizer")):
        return _vllm_error(404, f"model {getattr(model, 'name', '?')} serves no token completions")
    prompt = req.get("prompt")
    if isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt):
        prompts = [prompt]
    elif (isinstance(prompt, list) and prompt
          and all(isinstance(p, list) and p and all(isinstance(t, int) for t in p) for p in prompt)):
        prompts = prompt
    else:
        return _vllm_error(400, "this server takes token-id prompts only (a list of ints or of lists of ints)",
                           "prompt")
    if req.get("stream") or (req.get("n") or 1) != 1 or req.get("echo"):
        return _vllm_error(400, "stream, echo and n > 1 are not served here", "n")
    logprobs = req.get("logprobs")
    if logprobs not in (None, 0):
        return _vllm_error(400, "only logprobs=0 (the sampled token's) is served here", "logprobs")
    max_tokens = req.get("max_tokens")
    max_tokens = 16 if max_tokens is None else int(max_tokens)
    limit = model.max_context
    for p in prompts:
        if len(p) + max_tokens > limit:
            return _vllm_error(400, f"This model's maximum context length is {limit} tokens. However, you requested "
                                    f"{max_tokens} output tokens and your prompt contains {len(p)} input tokens, for a "
                                    f"total of {len(p) + max_tokens} tokens. Please reduce the length of the input "
                                    "prompt or the number of requested output tokens.", "input_tokens")
    top_k = req.get("top_k")
    top_p = req.get("top_p")
    rep = req.get("repetition_penalty")
    # vLLM: the request's value, else the model's generation config, else the OpenAI default
    s = model.resolve_sampling(Sampling(temperature=req.get("temperature"), top_k=top_k if top_k not in (0, -1)
                                        else None, top_p=top_p, repetition_penalty=rep, seed=req.get("seed")))
    if top_k in (0, -1):
        s.top_k = None
    temperature = 1.0 if s.temperature is None else s.temperature
    if applied is not None:
        applied.update(temperature=temperature, top_k=s.top_k, top_p=s.top_p,
                       repetition_penalty=s.repetition_penalty, seed=s.seed)
    requested_stops = {int(i) for i in req.get("stop_token_ids") or []}
    ignore_eos = bool(req.get("ignore_eos"))
    primary_eos = None if ignore_eos else model.tokenizer.eos_token_id
    stops = requested_stops if ignore_eos else requested_stops | set(model.stop_ids)

    def run(p: list[int]):
        return model.engine.generate(p, max_tokens, temperature=temperature, top_k=s.top_k, top_p=s.top_p,
                                     repetition_penalty=s.repetition_penalty, seed=s.seed,
                                     generator=model._generator, stop_ids=stops)

    try:
        with ThreadPoolExecutor(max_workers=len(prompts)) as pool:
            draws = list(pool.map(run, prompts))
    except ModelError as e:
        status = 400 if "outside the vocabulary" in str(e) or "empty prompt" in str(e) else 500
        return _vllm_error(status, str(e))
    except cancel.Interrupted:
        return _vllm_error(503, "the server was interrupted")
    as_ids = bool(req.get("return_tokens_as_token_ids"))
    with_ids = bool(req.get("return_token_ids"))
    skip_special = req.get("skip_special_tokens", True)
    choices = []
    for index, (p, d) in enumerate(zip(prompts, draws)):
        lp = None
        if logprobs is not None:
            tokens = [f"token_id:{t}" if as_ids else model.tokenizer.decode([t]) for t in d.ids]
            offsets, at = [], 0
            for tok in tokens:
                offsets.append(at)
                at += len(tok)
            lp = {"text_offset": offsets, "token_logprobs": [max(v, -9999.0) for v in d.logprobs], "tokens": tokens,
                  "top_logprobs": [{tok: max(v, -9999.0)} for tok, v in zip(tokens, d.logprobs)]}
        last = d.ids[-1] if d.ids else None
        choices.append({"index": index, "text": model.tokenizer.decode(d.ids, skip_special_tokens=skip_special),
                        "logprobs": lp, "finish_reason": "stop" if d.stopped else "length",
                        "stop_reason": last if d.stopped and last != primary_eos else None,
                        "token_ids": list(d.ids) if with_ids else None, "prompt_logprobs": None,
                        "prompt_token_ids": list(p) if with_ids else None})
    prompt_tokens = sum(len(p) for p in prompts)
    completion_tokens = sum(len(d.ids) for d in draws)
    return 200, {"id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion", "created": int(time.time()),
                 "model": req.get("model") or model.name, "choices": choices, "service_tier": None,
                 "system_fingerprint": None, "kv_transfer_params": None,
                 "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + completion_tokens,
                           "completion_tokens": completion_tokens, "prompt_tokens_details": None}}

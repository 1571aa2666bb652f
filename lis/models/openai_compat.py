"""A client for OpenAI-compatible chat servers: vLLM, SGLang, ``transformers serve``, API providers.

    model = OpenAIChatModel("qwen3-4b", base_url="http://localhost:8000/v1",
                            sampling=Sampling(temperature=0.7, top_p=0.8, top_k=20))
    result = model.chat(messages, tools=TOOLS)

Retries are ours (the SDK's are off, so every attempt is logged): 408/409/429, 5xx, connection errors,
timeouts and replies that are empty, not JSON or not a chat completion, with backoff
(:mod:`lis.util.retry`, ``Retry-After`` honoured up to the cap). A context-length error raises
:class:`ContextLengthError` (the agent ends the episode with "token budget"), except when only
``max_tokens`` does not fit: then the request goes once more with it cut to the room left, as the
authors' client does. Other failures raise :class:`ModelError` naming the URL and the reason.

Deadlines: a call never outlives the caller's :mod:`lis.util.deadline` scope (:class:`ModelTimeout`),
whatever the server sends: the body is read in chunks while a watcher shuts the socket down at the
deadline, since a read timeout bounds the gap between bytes, not the total. A caller's ``stopped()``
ends it the same way, as ``cancel.Interrupted``. A reply over ``max_reply_bytes`` is not read further:
the turn's message says it was cut and ``ChatResult.reply_cut`` records how much was read.
"""
from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time
from typing import Any

import openai

from lis.models.base import ChatResult, ContextLengthError, ModelError, ModelTimeout, Sampling, Usage
from lis.util.text import safe_result, safe_text, safe_value
from lis.models.toolcalls import normalize_tool_calls
from lis.util.urls import EXAMPLE, base_url_problem
from lis.util import cancel, deadline
from lis.util.retry import Backoff, TryAgain, default_backoff_s, with_retries

log = logging.getLogger("lis.models.openai")

RETRY_STATUS = frozenset({408, 409, 429})
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_CONTEXT_PATTERNS = re.compile(
    r"maximum context length|context length|context_length_exceeded|context window|"
    r"exceeds the maximum allowed length|prompt is too long|input is too long|too many tokens", re.I)
# How vLLM / SGLang / OpenAI word the numbers: the context length, the total asked for, the input size.
_LIMIT = re.compile(r"maximum context length (?:is|of) (\d+)", re.I)
_REQUESTED = re.compile(r"requested (?:a total of )?(\d+) tokens", re.I)
_PROMPT = re.compile(r"(\d+) in the messages|(\d+) input tokens|(\d+) tokens from the input", re.I)
CONNECT_ATTEMPTS = 3    # a refused connection or an unknown host: tried this often in all (if max_retries allows)
CONNECT_BACKOFF_MAX_S = 1.0  # ... with at most this long between tries: then it fails (a few seconds, not 30)
CONNECT_FAILED = "connection failed"  # nothing listens at the URL: the reason of a refused connection's retry
MAX_REPLY_BYTES = 16 << 20  # a reply body past this is not read (models.<name>.max_reply_bytes)
WATCH_S = 0.1           # how often the deadline watcher looks
MIN_ROOM = 256          # fewer tokens left than this: the conversation is over (ContextLengthError)
ROOM_MARGIN = 16        # tokens kept free when max_tokens is cut to the room left


def omits_temperature(model: str) -> bool:
    """OpenAI reasoning models (names containing o3/o4) reject ``temperature``; the authors omit it."""
    name = model.lower()
    return "o3" in name or "o4" in name


class OpenAIChatModel:
    """One served model behind an OpenAI-compatible ``/chat/completions`` endpoint (thread-safe).

    ``name`` is our name for it (``models.<name>``); ``model`` the served name (default: ``name``). The
    key: ``api_key``, else ``$<api_key_env>``, else "EMPTY" (which local servers accept). ``base_url``
    defaults to ``$OPENAI_BASE_URL``, then the OpenAI API.
    """

    def __init__(self, name: str, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 sampling: Sampling | None = None, timeout_s: float = 1200.0, max_retries: int = 5,
                 backoff_s: float | None = None, backoff_max_s: float = 60.0, max_reply_bytes: int = MAX_REPLY_BYTES):
        if backoff_s is None:
            backoff_s = default_backoff_s()  # $LIS_BACKOFF_S, else 1 s
        if max_retries < 0 or timeout_s <= 0 or backoff_s < 0 or max_reply_bytes <= 0:
            raise ModelError(f"model '{name}': max_retries, timeout_s, backoff_s and max_reply_bytes must be "
                             f"positive (got {max_retries}, {timeout_s}, {backoff_s}, {max_reply_bytes})",
                             f"fix models.{name}")
        self.name = name
        self.model = model or name
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        problem = base_url_problem(self.base_url)
        if problem:  # at configuration time, not after a round of connection retries
            raise ModelError(f"model '{name}': base URL {self.base_url[:200]!r} is not usable: {problem}",
                             f"give --base-url (or models.{name}.base_url) an OpenAI-compatible server's URL, "
                             f"e.g. {EXAMPLE}")
        self.api_key_env = api_key_env
        self.sampling = sampling or Sampling()
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.max_reply_bytes = int(max_reply_bytes)
        key = api_key or (os.environ.get(api_key_env) if api_key_env else None) or "EMPTY"
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, max_retries=0, timeout=timeout_s)
        self._backoff = Backoff(backoff_s, backoff_max_s)

    # -- request -----------------------------------------------------------------------------
    def request_body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                     sampling: Sampling) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for one call (without timeout)."""
        # the SDK encodes the body strictly: text that is not valid Unicode (say a user's) goes as U+FFFD
        body: dict[str, Any] = {"model": self.model, "messages": safe_value(messages)[0]}
        if tools:
            body["tools"] = safe_value(tools)[0]
        reasoning_model = omits_temperature(self.model)
        if sampling.temperature is not None and not reasoning_model:
            body["temperature"] = sampling.temperature
        if sampling.top_p is not None:
            body["top_p"] = sampling.top_p
        if sampling.max_tokens is not None:
            body["max_completion_tokens" if reasoning_model else "max_tokens"] = sampling.max_tokens
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        extra = {k: v for k, v in (("top_k", sampling.top_k), ("repetition_penalty", sampling.repetition_penalty))
                 if v is not None}
        extra.update(sampling.extra_body)
        if extra:
            body["extra_body"] = extra
        return body

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             sampling: Sampling | None = None) -> ChatResult:
        """One assistant turn; ``sampling`` fields that are set override the model's own (errors: the
        module doc; ``max_tokens`` is cut only when the server names its context length and the input
        size, and at least MIN_ROOM tokens are left)."""
        body = self.request_body(messages, tools, self.sampling.override(sampling))
        shrunk = False
        t0 = time.perf_counter()

        def once() -> ChatResult:
            nonlocal shrunk
            while True:
                scope = deadline.current()
                timeout = self._attempt_timeout(scope)
                try:
                    resp, invalid = self._bounded(lambda: self._attempt(body, timeout, scope), scope)
                    if resp is None:  # over max_reply_bytes: not read further
                        return self._cut(invalid, time.perf_counter() - t0)
                except openai.APIStatusError as e:
                    reason = _status_reason(e)
                    if _is_context_error(e):
                        room = None if shrunk else _room_left(reason, body)
                        if room is not None:  # sent again at once, within the same attempt
                            key = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
                            log.warning("model %s at %s: %s; sending it again with %s=%d", self.name, self.base_url,
                                        reason, key, room)
                            body[key], shrunk = room, True
                            cancel.check()
                            continue
                        limit, requested, prompt = _context_numbers(reason)
                        raise ContextLengthError(
                            f"model '{self.name}' at {self.base_url}: context length exceeded ({reason})",
                            "shorten the conversation or raise the server's context length",
                            limit=limit, requested=requested, prompt_tokens=prompt) from None
                    if e.status_code not in RETRY_STATUS and e.status_code < 500:
                        raise ModelError(f"model '{self.name}' at {self.base_url}: request refused ({reason})",
                                         self._hint(e.status_code)) from None
                    raise TryAgain(reason, retry_after=_retry_after(e)) from None
                except openai.APITimeoutError:
                    if scope is not None and scope.expired():
                        raise self._too_late(scope) from None
                    raise TryAgain(f"no answer within {timeout:g} s") from None
                except openai.APIConnectionError as e:  # nothing listens there (or no such host)
                    raise TryAgain(f"{CONNECT_FAILED} ({_cause(e)})", quick=True) from None
                except openai.APIError as e:  # e.g. a 200 whose body is not a chat completion
                    raise ModelError(f"model '{self.name}' at {self.base_url}: unusable response "
                                     f"({' '.join(str(e).split())[:200]})", "check that the URL is an OpenAI-compatible "
                                     f"server (models.{self.name}.base_url ends in /v1)") from None
                return self._result(resp, time.perf_counter() - t0, invalid)

        def give_up(reason: str, n: int) -> ModelError:
            return ModelError(f"model '{self.name}' at {self.base_url}: {reason}; gave up after {n} "
                              f"attempt{'s' if n > 1 else ''}", self._hint(None, answered=not reason.startswith(
                                  CONNECT_FAILED)))

        scope = deadline.current()
        return with_retries(once, attempts=self.max_retries + 1, backoff=self._backoff, give_up=give_up,
                            what=f"model {self.name} at {self.base_url}", log=log,
                            quick_attempts=CONNECT_ATTEMPTS, quick_max_s=CONNECT_BACKOFF_MAX_S,
                            until=None if scope is None else scope.until,
                            too_late=lambda reason: self._too_late(scope, reason))

    # -- the call under a deadline -------------------------------------------------------------
    def _attempt_timeout(self, scope: deadline.Scope | None) -> float:
        """This attempt's timeout: ``timeout_s``, cut to the time the caller has left. Raises
        ModelTimeout when none is left, and Interrupted when the caller stopped."""
        if scope is None:
            return self.timeout_s
        if scope.is_stopped():
            raise cancel.Interrupted("cancelled")
        left = scope.remaining()
        if left is None:
            return self.timeout_s
        if left <= 0:
            raise self._too_late(scope)
        return max(0.05, min(self.timeout_s, left))

    def _too_late(self, scope: deadline.Scope | None, reason: str | None = None) -> ModelTimeout:
        why = f" (last failure: {reason})" if reason else ""
        return ModelTimeout(f"model '{self.name}' at {self.base_url}: no complete answer before the deadline{why}",
                            "the server is slow or stalled (the episode's time limit ran out)")

    def _attempt(self, body: dict[str, Any], timeout: float, scope: deadline.Scope | None) -> tuple[Any, int]:
        """One request: (the chat completion, invalid UTF-8 pieces replaced), or (None, bytes read) for a
        reply over ``max_reply_bytes``."""
        with self._client.chat.completions.with_streaming_response.create(**body, timeout=timeout) as r:
            data, read = self._read(r, scope)
        if data is None:
            return None, read
        return self._decode(data)

    def _bounded(self, attempt: Any, scope: deadline.Scope | None) -> Any:
        """``attempt()``, but the caller stops waiting at its deadline (ModelTimeout) or once it stopped
        (Interrupted), even before the server sent its headers: the attempt then runs on in its own
        thread until its socket is shut down (the reply's body) or its timeout (at most the time that
        was left) ends it."""
        if scope is None or (scope.until is None and scope.stopped is None):
            return attempt()
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["value"] = attempt()
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                box["error"] = e
            finally:
                done.set()

        threading.Thread(target=work, daemon=True, name="lis-model-call").start()
        while not done.wait(WATCH_S):
            if scope.is_stopped():
                raise cancel.Interrupted("cancelled")
            if scope.expired():
                raise self._too_late(scope)
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _read(self, r: Any, scope: deadline.Scope | None) -> tuple[bytes | None, int]:
        """(the body, bytes read), the body None when it was over ``max_reply_bytes``. The connection is
        shut down at the caller's deadline or once it stopped (:class:`_Watch`): ModelTimeout /
        Interrupted. A body that breaks off is retried (TryAgain)."""
        watch = _Watch(_socket_of(r), scope)
        chunks: list[bytes] = []
        size = 0
        broke: str | None = None
        try:
            for chunk in r.iter_bytes():
                size += len(chunk)
                if size > self.max_reply_bytes:
                    return None, size
                chunks.append(chunk)
        except Exception as e:  # noqa: BLE001 - the HTTP library's read errors (the SDK's own httpx fork)
            broke = f"the reply broke off after {size} bytes ({type(e).__name__}: {' '.join(str(e).split())[:120]})"
        finally:
            watch.close()
        if watch.why == "deadline":
            raise self._too_late(scope)
        if watch.why == "stopped":
            raise cancel.Interrupted("cancelled")
        if broke:
            raise TryAgain(broke)
        return b"".join(chunks), size

    def _decode(self, data: bytes) -> tuple[dict[str, Any], int]:
        """The body as a chat completion (a dict) and the invalid UTF-8 pieces replaced; TryAgain when
        it is empty, not JSON or not a chat completion (a server fault, like a 5xx)."""
        if not data.strip():
            raise TryAgain("the reply is empty")
        try:
            text, invalid = data.decode("utf-8"), 0
        except UnicodeDecodeError:
            text, invalid = safe_text(data)
        try:
            resp = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise TryAgain(f"the reply is not JSON ({getattr(e, 'msg', type(e).__name__)}: "
                           f"{safe_text(text[:80])[0]!r})") from None
        if not isinstance(resp, dict) or not isinstance(resp.get("choices"), list) or not resp["choices"]:
            what = type(resp).__name__ if not isinstance(resp, dict) else "an object without choices"
            raise TryAgain(f"the reply is not a chat completion ({what})")
        return resp, invalid

    def _cut(self, read: int, latency_s: float) -> ChatResult:
        """The turn of a reply over ``max_reply_bytes``: nothing of it is kept, and the turn says so."""
        log.warning("model %s at %s: a reply over %d bytes was not read further (models.%s.max_reply_bytes)",
                    self.name, self.base_url, self.max_reply_bytes, self.name)
        note = (f"[lis: your reply was longer than {self.max_reply_bytes} bytes and was cut: none of it was kept. "
                "Answer in shorter turns.]")
        return ChatResult(message={"role": "assistant", "content": note}, usage=Usage(), latency_s=latency_s,
                          finish_reason="length", reply_cut=read)

    def _hint(self, status: int | None, answered: bool = False) -> str:
        """How to fix a failed call: by the status the server gave, or (None) by whether it answered at all."""
        if status in (401, 403):
            return f"set the API key in ${self.api_key_env} or fix models.{self.name}.api_key_env"
        if status == 404:
            return f"fix models.{self.name}.model (the served model name) or models.{self.name}.base_url"
        if status is not None and 400 <= status < 500:
            return f"check models.{self.name}.sampling and what the server supports"
        if answered:  # it is running: what it sends is the problem
            return (f"the server runs but its replies are not usable chat completions: check its log, and that "
                    f"models.{self.name}.base_url is its OpenAI-compatible endpoint (…/v1)")
        return f"start the server or fix models.{self.name}.base_url"

    # -- response ----------------------------------------------------------------------------
    def _result(self, resp: Any, latency_s: float, invalid: int = 0) -> ChatResult:
        """ChatResult from a ChatCompletion (or its JSON as a dict), its text made safe
        (:mod:`lis.util.text`; ``invalid``: replacements already made while decoding it). Raises
        ModelError when the response has no choice."""
        if not (isinstance(resp, dict) or hasattr(resp, "model_dump")):
            raise ModelError(f"model '{self.name}' at {self.base_url}: the answer is not a chat completion "
                             f"({safe_text(str(resp)[:100])[0]!r})",
                             f"check models.{self.name}.base_url (it should end in /v1)")
        raw = resp if isinstance(resp, dict) else resp.model_dump()
        choices = raw.get("choices") or []
        if not choices:
            raise ModelError(f"model '{self.name}' at {self.base_url}: response without choices",
                             "check the server's log")
        choice = choices[0] if isinstance(choices[0], dict) else {}
        msg = choice.get("message") or {}
        message: dict[str, Any] = {"role": "assistant", "content": msg.get("content")}
        calls = normalize_tool_calls(msg.get("tool_calls"), salt=raw.get("id", ""))
        if calls:
            message["tool_calls"] = calls
        reasoning = _reasoning(msg)
        if reasoning:
            message["reasoning_content"] = reasoning
        usage = raw.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        return safe_result(ChatResult(message=message,
                                      usage=Usage(usage.get("prompt_tokens"), usage.get("completion_tokens"),
                                                  details.get("cached_tokens")),
                                      latency_s=latency_s, finish_reason=choice.get("finish_reason"), raw=raw,
                                      invalid_text=invalid))


def _socket_of(r: Any) -> socket.socket | None:
    """The socket under a streaming response (httpx's network stream), or None."""
    try:
        stream = r.http_response.extensions.get("network_stream")
        return stream.get_extra_info("socket") if stream is not None else None
    except Exception:  # noqa: BLE001 - another transport: no watcher, the read timeout still bounds each read
        return None


class _Watch:
    """Shuts ``sock`` down (which ends a read blocked on it) once the scope's deadline passes or the
    caller stopped; ``why`` says which. Closing a response from another thread does not end a
    blocked read; shutting its socket down does."""

    def __init__(self, sock: socket.socket | None, scope: deadline.Scope | None):
        self.why: str | None = None
        self._done = threading.Event()
        if sock is not None and scope is not None and (scope.until is not None or scope.stopped is not None):
            threading.Thread(target=self._run, args=(sock, scope), daemon=True, name="lis-model-watch").start()

    def _run(self, sock: socket.socket, scope: deadline.Scope) -> None:
        while not self._done.wait(WATCH_S):
            why = "deadline" if scope.expired() else ("stopped" if scope.is_stopped() else None)
            if why:
                self.why = why
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return

    def close(self) -> None:
        self._done.set()


def _reasoning(msg: dict[str, Any]) -> str | None:
    """The reasoning text wherever the server put it (vLLM/SGLang/DeepSeek/LiteLLM field names)."""
    for key in ("reasoning_content", "reasoning", "thinking"):
        if isinstance(msg.get(key), str) and msg[key]:
            return msg[key]
    fields = msg.get("provider_specific_fields") or {}
    for key in ("reasoning_content", "thinking", "reasoning"):
        if isinstance(fields.get(key), str) and fields[key]:
            return fields[key]
    return None


def _status_reason(e: openai.APIStatusError) -> str:
    """``HTTP 429: <server message>`` on one line, cut to 300 characters."""
    return http_reason(e.status_code, e.body, e.message)


def http_reason(status: int, body: Any, fallback: str | None) -> str:
    """``HTTP <status>: <message>`` from an OpenAI-style error body (else ``fallback``), on one line."""
    text = None
    if isinstance(body, dict):
        err = body.get("error", body)
        text = err.get("message") if isinstance(err, dict) else str(err)
        text = text or body.get("message") or body.get("detail")
    text = " ".join(str(text or fallback or "").split())[:300]
    return f"HTTP {status}: {text}" if text else f"HTTP {status}"


def _is_context_error(e: openai.APIStatusError) -> bool:
    return e.status_code in (400, 413, 422) and bool(_CONTEXT_PATTERNS.search(_status_reason(e)))


def _context_numbers(reason: str) -> tuple[int | None, int | None, int | None]:
    """(context length, tokens requested in all, input tokens) as far as the error message says."""
    def first(pattern: re.Pattern[str]) -> int | None:
        m = pattern.search(reason)
        return int(next(g for g in m.groups() if g)) if m else None

    return first(_LIMIT), first(_REQUESTED), first(_PROMPT)


def _room_left(reason: str, body: dict[str, Any]) -> int | None:
    """The max_tokens that fits when the input fits but input + max_tokens does not, else None."""
    limit, _, prompt = _context_numbers(reason)
    if limit is None or prompt is None:
        return None
    room = limit - prompt - ROOM_MARGIN
    asked = body.get("max_completion_tokens", body.get("max_tokens"))
    if room < MIN_ROOM or (asked is not None and asked <= room):
        return None
    return room


def _retry_after(e: openai.APIStatusError) -> float | None:
    try:
        return float(e.response.headers.get("retry-after"))
    except (TypeError, ValueError, AttributeError):
        return None


def _cause(e: BaseException) -> str:
    """The innermost cause's text (e.g. "[Errno 111] Connection refused"), on one line."""
    while e.__cause__ is not None:
        e = e.__cause__
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:200]

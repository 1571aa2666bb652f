"""A client for OpenAI-compatible chat servers: vLLM, SGLang, ``transformers serve``, API providers.

    model = OpenAIChatModel("qwen3-4b", base_url="http://localhost:8000/v1",
                            sampling=Sampling(temperature=0.7, top_p=0.8, top_k=20))
    result = model.chat(messages, tools=TOOLS)

Retries are ours (the SDK's are switched off so every attempt is logged): 408/409/429, 5xx,
connection errors and timeouts are retried with exponential backoff and jitter
(:mod:`lis.util.retry`; a server's ``Retry-After`` is honoured up to the cap), at most
``max_retries`` times. A context-length error is never retried: it raises
:class:`ContextLengthError` (the agent ends the episode with "token budget") — except when the conversation fits and only ``max_tokens`` does not: then the
request goes once more with ``max_tokens`` cut to the room left (the authors' client does the
same). Everything else that fails for good raises :class:`ModelError` with one line naming the
URL and the reason.
"""
from __future__ import annotations

import json
import logging
import os
import re
import time
from typing import Any

import openai

from lis.models.base import ChatResult, ContextLengthError, ModelError, Sampling, Usage
from lis.util.text import safe_result, safe_text, safe_value
from lis.models.toolcalls import normalize_tool_calls
from lis.util.urls import EXAMPLE, base_url_problem
from lis.util import cancel
from lis.util.retry import Backoff, TryAgain, with_retries

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
MIN_ROOM = 256          # fewer tokens left than this: the conversation is over (ContextLengthError)
ROOM_MARGIN = 16        # tokens kept free when max_tokens is cut to the room left


def omits_temperature(model: str) -> bool:
    """OpenAI reasoning models (names containing o3/o4) reject ``temperature``; the authors omit it."""
    name = model.lower()
    return "o3" in name or "o4" in name


class OpenAIChatModel:
    """One served model behind an OpenAI-compatible ``/chat/completions`` endpoint (thread-safe).

    ``name`` is our name for it (``models.<name>`` in params); ``model`` the served name sent in
    requests (default: ``name``). ``api_key`` wins over the environment variable ``api_key_env``;
    with neither set the key is "EMPTY", which local servers accept. ``base_url`` defaults to
    ``$OPENAI_BASE_URL``, then the OpenAI API.
    """

    def __init__(self, name: str, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 sampling: Sampling | None = None, timeout_s: float = 1200.0, max_retries: int = 5,
                 backoff_s: float = 1.0, backoff_max_s: float = 60.0):
        if max_retries < 0 or timeout_s <= 0 or backoff_s < 0:
            raise ModelError(f"model '{name}': max_retries, timeout_s and backoff_s must be positive "
                             f"(got {max_retries}, {timeout_s}, {backoff_s})", f"fix models.{name}")
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
        """One assistant turn; ``sampling`` fields that are set override the model's own.

        Raises ContextLengthError when the conversation does not fit the server's context (never
        retried), and ModelError when the request is refused (other 4xx) or every attempt failed.
        When only ``max_tokens`` is too large (the server names its context length and the input
        size, and at least MIN_ROOM tokens are left), the request is sent once more with
        ``max_tokens`` cut to the room left, as the authors' client does.
        """
        body = self.request_body(messages, tools, self.sampling.override(sampling))
        shrunk = False
        t0 = time.perf_counter()

        def once() -> ChatResult:
            nonlocal shrunk
            while True:
                try:
                    raw_resp = self._client.chat.completions.with_raw_response.create(**body, timeout=self.timeout_s)
                    resp, invalid = _parse(raw_resp)
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
                    raise TryAgain(f"no answer within {self.timeout_s:g} s") from None
                except openai.APIConnectionError as e:  # nothing listens there (or no such host)
                    raise TryAgain(f"connection failed ({_cause(e)})", quick=True) from None
                except openai.APIError as e:  # e.g. a 200 whose body is not a chat completion
                    raise ModelError(f"model '{self.name}' at {self.base_url}: unusable response "
                                     f"({' '.join(str(e).split())[:200]})", "check that the URL is an OpenAI-compatible "
                                     f"server (models.{self.name}.base_url ends in /v1)") from None
                return self._result(resp, time.perf_counter() - t0, invalid)

        def give_up(reason: str, n: int) -> ModelError:
            return ModelError(f"model '{self.name}' at {self.base_url}: {reason}; gave up after {n} "
                              f"attempt{'s' if n > 1 else ''}", self._hint(None))

        return with_retries(once, attempts=self.max_retries + 1, backoff=self._backoff, give_up=give_up,
                            what=f"model {self.name} at {self.base_url}", log=log,
                            quick_attempts=CONNECT_ATTEMPTS, quick_max_s=CONNECT_BACKOFF_MAX_S)

    def _hint(self, status: int | None) -> str:
        if status in (401, 403):
            return f"set the API key in ${self.api_key_env} or fix models.{self.name}.api_key_env"
        if status == 404:
            return f"fix models.{self.name}.model (the served model name) or models.{self.name}.base_url"
        if status is not None and 400 <= status < 500:
            return f"check models.{self.name}.sampling and what the server supports"
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


def _parse(raw_resp: Any) -> tuple[Any, int]:
    """(the parsed response, invalid pieces replaced). A body that is not valid UTF-8 (which the SDK
    cannot parse: ``UnicodeDecodeError``) is decoded with U+FFFD for each bad piece and read as JSON."""
    try:
        return raw_resp.parse(), 0
    except UnicodeDecodeError:
        text, invalid = safe_text(raw_resp.content)
        try:
            return json.loads(text), invalid
        except ValueError:
            return text, invalid


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
    body = e.body
    text = None
    if isinstance(body, dict):
        err = body.get("error", body)
        text = err.get("message") if isinstance(err, dict) else str(err)
        text = text or body.get("message") or body.get("detail")
    text = " ".join(str(text or e.message or "").split())
    return f"HTTP {e.status_code}: {text[:300]}" if text else f"HTTP {e.status_code}"


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

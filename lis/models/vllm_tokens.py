"""Token-level generation from a vLLM server, with :class:`~lis.models.batch_engine.BatchEngine`'s API.

    engine = VLLMTokenEngine("http://gpu-host:8000/v1", "Qwen/Qwen3-4B-Instruct-2507", stop_ids={151645, 151643})
    draw = engine.generate(prompt_ids, 1024, temperature=1.0, seed=7)    # from many threads at once

Each call is one ``POST /v1/completions`` whose prompt is the token ids (no re-tokenisation), asking
for the sampled ids (``return_token_ids``; else parsed from ``logprobs.tokens`` as ``"token_id:<id>"``)
and their log-probabilities; the server batches the callers' threads. ``stop_ids`` given: the request
carries ``stop_token_ids`` and ``ignore_eos``, so the sequence ends exactly on those ids (stop token
kept, as in our sampler). A call with a ``generator`` but no ``seed`` sends a seed drawn from it.
``max_new_tokens`` is cut to the room the server's ``max_model_len`` (from ``/v1/models``) leaves.

Log-probabilities: vLLM's ``--logprobs-mode processed_logprobs`` (what TRL runs) reports the sampling
log-probability, as :mod:`lis.models.sampler` does; ``raw_logprobs`` (vLLM's default) agrees only at
temperature 1 with no other shaping. Pass the server's mode as ``logprobs_mode``; a request whose
settings make the two differ logs a warning once.

Every sampling setting is sent explicitly, a disabled one included (top-k ``-1``, top-p 1,
repetition penalty 1, ``min_p`` 0): otherwise vLLM applies the model's ``generation_config.json``
defaults (e.g. top-k 20 for Qwen3-Instruct) and the policy samples from another distribution than
the trainer assumes.

Retries and backoff as :class:`~lis.models.openai_compat.OpenAIChatModel`; a context-length refusal
raises ContextLengthError; cancellation (:mod:`lis.util.cancel`) raises ``Interrupted`` in the caller
(the request in flight is abandoned).
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Any

import httpx
import torch

from lis.models.base import ContextLengthError, ModelError
from lis.util.urls import EXAMPLE, base_url_problem
from lis.models.openai_compat import RETRY_STATUS, _CONTEXT_PATTERNS, _cause, _context_numbers, http_reason
from lis.models.sampler import Draw
from lis.util import cancel
from lis.util.retry import Backoff, TryAgain, default_backoff_s, with_retries

log = logging.getLogger("lis.models.vllm")

LOGPROBS_MODES = ("raw_logprobs", "processed_logprobs")
TOKEN_PREFIX = "token_id:"
POLL_S = 0.05


class VLLMTokenEngine:
    """``generate(prompt_ids, max_new_tokens, ...) -> Draw`` against a vLLM server (thread-safe).

    ``base_url``: the server's OpenAI root (``http://host:8000/v1``); ``model``: the served model
    name; the API key from ``api_key`` or ``$<api_key_env>`` ("EMPTY" when neither is set).
    """

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", *,
                 api_key: str | None = None, stop_ids: set[int] | None = None,
                 logprobs_mode: str = "processed_logprobs", max_model_len: int | None = None,
                 timeout_s: float = 1200.0, max_retries: int = 5, backoff_s: float | None = None,
                 backoff_max_s: float = 60.0, max_connections: int = 256):
        if backoff_s is None:  # $LIS_BACKOFF_S, else 1 s
            backoff_s = default_backoff_s()
        if logprobs_mode not in LOGPROBS_MODES:
            raise ModelError(f"vLLM engine for {model}: unknown logprobs_mode {logprobs_mode!r}",
                             f"use the server's --logprobs-mode: {', '.join(LOGPROBS_MODES)}")
        if max_retries < 0 or timeout_s <= 0 or backoff_s < 0:
            raise ModelError(f"vLLM engine for {model}: max_retries, timeout_s and backoff_s must be positive",
                             "fix the engine settings")
        problem = base_url_problem(base_url)
        if problem:  # at configuration time, not after a round of connection retries
            raise ModelError(f"vLLM engine for {model}: base URL {str(base_url)[:200]!r} is not usable: {problem}",
                             f"give it an OpenAI-compatible server's URL, e.g. {EXAMPLE}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.stop_ids = None if stop_ids is None else frozenset(int(i) for i in stop_ids)
        self.logprobs_mode = logprobs_mode
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self._max_model_len = max_model_len
        self._max_len_known = max_model_len is not None
        key = api_key or (os.environ.get(api_key_env) if api_key_env else None) or "EMPTY"
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(30.0, timeout_s)),
                                    headers={"Authorization": f"Bearer {key}"},
                                    limits=httpx.Limits(max_connections=max_connections,
                                                        max_keepalive_connections=max_connections))
        self._lock = threading.Lock()
        self._backoff = Backoff(backoff_s, backoff_max_s)
        self._warned: set[str] = set()

    # -- the engine API ----------------------------------------------------------------------
    def generate(self, prompt_ids: list[int], max_new_tokens: int, *, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, repetition_penalty: float | None = None,
                 seed: int | None = None, generator: torch.Generator | None = None,
                 stop_ids: set[int] | None = None) -> Draw:
        """Up to ``max_new_tokens`` tokens after ``prompt_ids`` (see the module doc). Raises
        ContextLengthError, ModelError (refused, unreachable, an unusable answer) or ``cancel.Interrupted``."""
        cancel.check()
        try:
            prompt = [int(t) for t in prompt_ids]
        except (TypeError, ValueError):
            raise ModelError(f"model '{self.model}': prompt ids must be a list of integers", "pass token ids") from None
        if not prompt:
            raise ModelError(f"model '{self.model}': empty prompt", "pass at least one token id")
        if not isinstance(max_new_tokens, int) or max_new_tokens < 0:
            raise ModelError(f"model '{self.model}': max_new_tokens must be an integer >= 0 (got {max_new_tokens!r})",
                             "fix the call")
        if max_new_tokens == 0:
            return Draw([], [], False)
        limit = self.max_model_len()
        if limit is not None:
            if len(prompt) >= limit:
                raise ContextLengthError(f"model '{self.model}' at {self.base_url}: prompt of {len(prompt)} tokens "
                                         f"fills its context of {limit}", "shorten the conversation",
                                         limit=limit, requested=len(prompt), prompt_tokens=len(prompt))
            max_new_tokens = min(max_new_tokens, limit - len(prompt))
        if seed is None and generator is not None:
            seed = int(torch.randint(0, 2**62, (1,), generator=generator))
        stops = self.stop_ids if stop_ids is None else frozenset(int(i) for i in stop_ids)
        self._check_logprobs(temperature, top_k, top_p, repetition_penalty)
        body = self.request_body(prompt, max_new_tokens, temperature=temperature, top_k=top_k, top_p=top_p,
                                 repetition_penalty=repetition_penalty, seed=seed, stop_ids=stops)
        return self._draw(self._post("/completions", body), prompt)

    def prompt_logprobs(self, ids: list[int]) -> list[float]:
        """The served model's log-probability of each of ``ids[1:]`` given the ids before it (vLLM's
        ``prompt_logprobs``: ``log_softmax`` of the logits, no sampling settings applied). What a trainer
        compares with its own forward pass: after a weight push, they agree to the train–inference mismatch."""
        cancel.check()
        body = {"model": self.model, "prompt": [int(t) for t in ids], "max_tokens": 1, "prompt_logprobs": 0,
                "temperature": 1.0}
        data = self._post("/completions", body)
        try:
            rows = data["choices"][0]["prompt_logprobs"][1:]
            return [float(row[str(int(t))]["logprob"]) for row, t in zip(rows, ids[1:], strict=True)]
        except (KeyError, IndexError, TypeError, ValueError) as e:
            raise ModelError(f"model '{self.model}' at {self.base_url}: no usable prompt_logprobs in the answer "
                             f"({type(e).__name__}: {e})", "check that the server is vLLM") from None

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "VLLMTokenEngine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def request_body(self, prompt: list[int], max_tokens: int, *, temperature: float, top_k: int | None,
                     top_p: float | None, repetition_penalty: float | None, seed: int | None,
                     stop_ids: frozenset[int] | None) -> dict[str, Any]:
        """The JSON body of one ``/v1/completions`` request."""
        body: dict[str, Any] = {"model": self.model, "prompt": prompt, "max_tokens": max_tokens, "n": 1,
                                "stream": False, "temperature": temperature, "logprobs": 0,
                                "return_token_ids": True, "return_tokens_as_token_ids": True, "min_p": 0.0}
        if top_k is not None:
            body["top_k"] = top_k if top_k > 0 else -1  # vLLM: -1 (or 0) = every token
        if top_p is not None:
            body["top_p"] = top_p
        if repetition_penalty is not None:
            body["repetition_penalty"] = repetition_penalty
        if seed is not None:
            body["seed"] = seed
        if stop_ids is not None:
            body["stop_token_ids"] = sorted(stop_ids)
            body["ignore_eos"] = True
        return body

    def max_model_len(self) -> int | None:
        """The server's context length for this model (``/v1/models``), None when it does not say."""
        with self._lock:
            if self._max_len_known:
                return self._max_model_len
        try:
            listing = self._get("/models")
        except ModelError as e:
            log.warning("model %s at %s: no model list (%s); max_tokens is not cut to the context", self.model,
                        self.base_url, e)
            listing = {}
        value = next((card.get("max_model_len") for card in listing.get("data") or []
                      if isinstance(card, dict) and card.get("id") == self.model), None)
        with self._lock:
            self._max_model_len = int(value) if isinstance(value, int) and value > 0 else None
            self._max_len_known = True
            return self._max_model_len

    # -- HTTP --------------------------------------------------------------------------------
    def _get(self, path: str) -> dict[str, Any]:
        try:
            resp = self._client.get(self.base_url + path, timeout=30)
        except httpx.HTTPError as e:
            raise ModelError(f"model '{self.model}' at {self.base_url}: {path} failed ({_cause(e)})",
                             "start the server or fix the base URL") from None
        if resp.status_code != 200:
            raise ModelError(f"model '{self.model}' at {self.base_url}: {path} answered HTTP {resp.status_code}",
                             "check the base URL (it ends in /v1)")
        try:
            return resp.json()
        except ValueError:
            raise ModelError(f"model '{self.model}' at {self.base_url}: {path} did not answer JSON",
                             "check the base URL (it ends in /v1)") from None

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST with retries; the decoded JSON answer. Raises ContextLengthError / ModelError."""

        def once() -> dict[str, Any]:
            status, data, retry_after, reason = self._send(path, body)
            if status == 200:
                if not isinstance(data, dict):
                    raise ModelError(f"model '{self.model}' at {self.base_url}: the answer is not JSON",
                                     "check that the URL is a vLLM server (it ends in /v1)")
                return data
            if status is not None and status not in RETRY_STATUS and status < 500:
                if status in (400, 413, 422) and _CONTEXT_PATTERNS.search(reason):
                    limit, requested, prompt = _context_numbers(reason)
                    raise ContextLengthError(f"model '{self.model}' at {self.base_url}: context length exceeded "
                                             f"({reason})", "shorten the conversation or raise --max-model-len",
                                             limit=limit, requested=requested, prompt_tokens=prompt)
                raise ModelError(f"model '{self.model}' at {self.base_url}: request refused ({reason})",
                                 "check the sampling settings and the served model name")
            raise TryAgain(reason, retry_after=retry_after)

        def give_up(reason: str, n: int) -> ModelError:
            return ModelError(f"model '{self.model}' at {self.base_url}: {reason}; gave up after {n} "
                              f"attempt{'s' if n > 1 else ''}", "start the server or fix the base URL")

        return with_retries(once, attempts=self.max_retries + 1, backoff=self._backoff, give_up=give_up,
                            what=f"model {self.model} at {self.base_url}", log=log)

    def _send(self, path: str, body: dict[str, Any]) -> tuple[int | None, Any, float | None, str]:
        """One request, waited for in a helper thread so that cancellation is noticed at once.
        Returns (status or None, JSON or None, Retry-After, reason)."""
        result: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                result["resp"] = self._client.post(self.base_url + path, json=body)
            except httpx.TimeoutException:
                result["reason"] = f"no answer within {self.timeout_s:g} s"
            except httpx.HTTPError as e:
                result["reason"] = f"connection failed ({_cause(e)})"
            except Exception as e:  # noqa: BLE001 - e.g. the client was closed: reported, not lost
                result["reason"] = f"request failed ({type(e).__name__}: {e})"
            finally:
                done.set()

        threading.Thread(target=run, daemon=True, name="lis-vllm-request").start()
        while not done.wait(POLL_S):
            cancel.check()  # the request in flight is abandoned
        resp = result.get("resp")
        if resp is None:
            return None, None, None, result.get("reason", "request failed")
        try:
            data = resp.json()
        except ValueError:
            data = None
        if resp.status_code == 200:
            return 200, data, None, ""
        try:
            retry_after = float(resp.headers.get("retry-after"))
        except (TypeError, ValueError):
            retry_after = None
        return resp.status_code, data, retry_after, http_reason(resp.status_code, data, resp.text)

    # -- the answer --------------------------------------------------------------------------
    def _draw(self, data: dict[str, Any], prompt: list[int]) -> Draw:
        """The Draw of a completion answer. Raises ModelError when it lacks ids or log-probs."""
        choices = data.get("choices") or []
        if not choices or not isinstance(choices[0], dict):
            raise ModelError(f"model '{self.model}' at {self.base_url}: completion without choices",
                             "check the server's log")
        choice = choices[0]
        finish = choice.get("finish_reason")
        if finish not in ("stop", "length"):
            raise ModelError(f"model '{self.model}' at {self.base_url}: generation ended with {finish!r}",
                             "check the server's log")
        lp = choice.get("logprobs") or {}
        tokens, values = lp.get("tokens"), lp.get("token_logprobs")
        if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
            raise ModelError(f"model '{self.model}' at {self.base_url}: the answer has no per-token log-probs",
                             "the server must be vLLM (completions with logprobs)")
        try:
            from_tokens = [int(t.removeprefix(TOKEN_PREFIX)) for t in tokens]
        except (AttributeError, ValueError):
            raise ModelError(f"model '{self.model}' at {self.base_url}: logprobs.tokens are not 'token_id:<id>' "
                             "strings", "the server must support return_tokens_as_token_ids (vLLM)") from None
        ids = choice.get("token_ids")
        if ids is None:
            ids = from_tokens
        elif list(ids) != from_tokens:
            raise ModelError(f"model '{self.model}' at {self.base_url}: token_ids and logprobs.tokens disagree",
                             "check the server's version")
        echoed = choice.get("prompt_token_ids")
        if echoed is not None and list(echoed) != prompt:
            raise ModelError(f"model '{self.model}' at {self.base_url}: the server changed the prompt ids "
                             f"({len(echoed)} instead of {len(prompt)} tokens)", "send token ids, not text")
        if any(v is None for v in values):
            raise ModelError(f"model '{self.model}' at {self.base_url}: a sampled token has no log-prob",
                             "check the server's --max-logprobs")
        return Draw([int(i) for i in ids], [float(v) for v in values], finish == "stop")

    def _check_logprobs(self, temperature: float, top_k: int | None, top_p: float | None,
                        repetition_penalty: float | None) -> None:
        shaped = ((top_k is not None and top_k > 0) or (top_p is not None and top_p < 1)
                  or (repetition_penalty is not None and repetition_penalty != 1.0))
        if self.logprobs_mode != "raw_logprobs" or temperature == 0:
            return
        if shaped:
            why = "raw_logprobs ignore top-k/top-p/repetition-penalty shaping"
        elif temperature != 1:
            why = "raw_logprobs ignore the temperature"
        else:
            return
        with self._lock:
            if why in self._warned:
                return
            self._warned.add(why)
        log.warning("model %s at %s: the server's log-probs differ from the sampling log-probs "
                    "(%s)", self.model, self.base_url, why)

"""Any model Inspect can call, as a lis :class:`~lis.models.base.ChatModel`.

lis's episode loop is synchronous and runs on a worker thread (``anyio.to_thread``); each
``chat()`` hands the call back to Inspect's event loop (``anyio.from_thread``), where
``Model.generate`` runs with everything Inspect adds (providers, retries, rate limits, the sample's
limits, transcript events). Context variables travel both ways, so the call belongs to its sample.

A sample limit Inspect raises inside ``generate`` ends the episode like a model error and is kept
on :attr:`InspectChatModel.limit`: the solver re-raises it once the episode's record is written.
The episode's deadline (``lis.util.deadline``) cancels ``generate``, retries included, as
``model_timeout``; anything that is not an answer is a model error, the record kept.
"""
from __future__ import annotations

import functools
import json
import logging
import time
from typing import Any

import anyio.from_thread
import pydantic
from inspect_ai.model import GenerateConfig, Model
from inspect_ai.util import LimitExceededError

from lis.inspect.messages import assistant_from_inspect, to_inspect, tool_info, usage_from_inspect
from lis.models.base import ChatResult, ContextLengthError, ModelError, ModelTimeout, Sampling
from lis.util import deadline
from lis.util.retry import Backoff, TryAgain, default_backoff_s, with_retries

ATTEMPTS = 3  # calls in all for a reply that is not an answer (lis's own client: models.<m>.max_retries + 1)
log = logging.getLogger("lis.inspect.model")

FINISH = {"stop": "stop", "tool_calls": "tool_calls", "max_tokens": "length", "model_length": "length",
          "content_filter": "content_filter", "unknown": None}


class SampleLimitReached(ModelError):
    """An Inspect sample limit stopped the model call (the episode ends; the solver re-raises it)."""


def generate_config(sampling: Sampling | None) -> GenerateConfig:
    """lis's sampling settings as Inspect's (only what is set; the rest is the eval's config)."""
    s = sampling or Sampling()
    fields = {"temperature": s.temperature, "top_p": s.top_p, "top_k": s.top_k, "max_tokens": s.max_tokens,
              "seed": s.seed, "extra_body": s.extra_body or None}
    return GenerateConfig(**{k: v for k, v in fields.items() if v is not None})


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return f"{type(e).__name__}: {text[:300]}"


class _TooLate(Exception):
    """The episode's deadline passed inside ``generate``."""


async def _bounded(call, left: float | None):
    """``await call()``, cancelled after ``left`` seconds (None: unbounded); raises :class:`_TooLate` then."""
    if left is None:
        return await call()
    with anyio.move_on_after(left):
        return await call()
    raise _TooLate()  # reached only when the deadline cancelled the call


class InspectChatModel:
    """``chat()`` through an Inspect ``Model``; call it from a thread started by ``anyio.to_thread``."""

    def __init__(self, model: Model, name: str | None = None):
        self.model = model
        self.name = name or str(model)  # "provider/model", as Inspect names it
        self.limit: LimitExceededError | None = None
        self._tools: dict[str, list[Any]] = {}

    def _tool_infos(self, tools: list[dict[str, Any]] | None) -> list[Any]:
        if not tools:
            return []
        key = json.dumps(tools, sort_keys=True)  # the same schemas every turn: converted once
        if key not in self._tools:
            self._tools[key] = [tool_info(t) for t in tools]
        return self._tools[key]

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             sampling: Sampling | None = None) -> ChatResult:
        """One call. A reply that is not an answer and that Inspect's provider does not retry itself is
        asked for again, as lis's own client does: :data:`ATTEMPTS` times, backing off within the episode's time."""
        t0 = time.monotonic()
        scope = deadline.current()

        def give_up(reason: str, n: int) -> ModelError:
            return ModelError(f"{self.name} failed: {reason}; gave up after {n} attempt{'s' if n > 1 else ''}",
                              "check the model server (Inspect retried what it retries already)")

        def too_late(reason: str) -> ModelTimeout:
            return self._too_late(t0)

        out = with_retries(lambda: self._once(messages, tools, sampling, t0), attempts=ATTEMPTS,
                           backoff=Backoff(default_backoff_s()), give_up=give_up, what=f"model {self.name}", log=log,
                           until=None if scope is None else scope.until, too_late=too_late)
        msg = assistant_from_inspect(out.message)
        if out.stop_reason == "model_length" and not msg.get("content") and not msg.get("tool_calls"):
            raise ContextLengthError(f"{self.name}: the conversation no longer fits the model's context window")
        if out.error:
            raise ModelError(f"{self.name} failed: {' '.join(out.error.split())[:300]}")
        return ChatResult(message=msg, usage=usage_from_inspect(out.usage), latency_s=time.monotonic() - t0,
                          finish_reason=FINISH.get(out.stop_reason, out.stop_reason))

    def _too_late(self, t0: float) -> ModelTimeout:
        return ModelTimeout(f"{self.name}: no complete answer before the deadline (the episode's time limit ran out "
                            f"after {time.monotonic() - t0:.1f} s in the model call, Inspect's retries included)",
                            "check that the model server answers, or raise the episode's time limit "
                            "(-T episode_timeout_s)")

    def _once(self, messages, tools, sampling, t0: float):
        """One ``generate``, bounded by the episode's time; TryAgain for a reply worth asking for again."""
        left = deadline.remaining()
        if left is not None and left <= 0:
            raise self._too_late(t0)
        call = functools.partial(self.model.generate, to_inspect(messages), tools=self._tool_infos(tools),
                                 config=generate_config(sampling))
        try:
            out = anyio.from_thread.run(_bounded, call, left)
        except _TooLate:
            raise self._too_late(t0) from None
        except LimitExceededError as e:
            self.limit = e
            raise SampleLimitReached(f"the sample's {e.type} limit was reached ({e.message})") from None
        except json.JSONDecodeError as e:  # a body that is not JSON: Inspect's provider does not retry it
            raise TryAgain(f"the reply is not JSON ({_one_line(e)})") from None
        except UnicodeDecodeError as e:  # Inspect's provider cannot decode it (lis's own client replaces such bytes)
            raise TryAgain(f"the reply is not UTF-8 ({_one_line(e)})") from None
        except pydantic.ValidationError as e:  # JSON, but not a chat completion (no model, no choices, ...)
            raise TryAgain(f"the reply is not a chat completion ({_one_line(e)})") from None
        except Exception as e:  # noqa: BLE001 - a provider's error after Inspect's own retries
            raise ModelError(f"{self.name} failed: {_one_line(e)}",
                             "check the model, its credentials and --model-base-url (Inspect retried already)") from e
        if not out.choices:
            raise TryAgain("the reply has no choices" + (f" ({' '.join(out.error.split())[:300]})" if out.error else ""))
        try:
            assistant_from_inspect(out.message)
        except Exception as e:  # noqa: BLE001 - a reply lis cannot read is the provider's failure, not the harness's
            raise ModelError(f"{self.name} failed: its reply cannot be read ({_one_line(e)})",
                             "check the model server") from e
        return out

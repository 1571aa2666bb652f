"""The model interface every backend implements: chat messages + tools + sampling → one assistant turn.

Messages and the returned assistant message are in OpenAI chat format:
``{"role": "assistant", "content": str | None, "tool_calls": [{"id", "type": "function",
"function": {"name", "arguments": <JSON string>}}], "reasoning_content": str (optional)}``.
Backends never execute tools and never parse ``<tool_call>`` text themselves unless their
template defines it (the local transformers backend parses through the tokenizer's chat
template); the agent's fallback parser handles models that write tool calls as text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from lis.errors import LisError


class ModelError(LisError):
    """A model call failed for good (server unreachable after retries, bad request, bad config)."""


class ModelTimeout(ModelError):
    """A model call passed its deadline (:mod:`lis.util.deadline`: the episode's time, a request's
    ``timeout_s``), however the server was sending: the agent ends the episode as ``timeout``."""


class ContextLengthError(ModelError):
    """The conversation no longer fits the model's context window (never retried): the agent ends the
    episode with "token budget". ``limit``, ``requested`` (in all) and ``prompt_tokens`` are set when the
    backend knows them."""

    def __init__(self, message: str, hint: str | None = None, limit: int | None = None,
                 requested: int | None = None, prompt_tokens: int | None = None):
        super().__init__(message, hint)
        self.limit = limit
        self.requested = requested
        self.prompt_tokens = prompt_tokens


TURN_SEED_STEP = 1_000_003  # turn k of a seeded episode samples with seed + k × this (Sampling.for_turn)


@dataclass
class Sampling:
    """Sampling settings of one model (params: models.<name>.sampling). None = the server's default."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)

    def override(self, other: "Sampling | None") -> "Sampling":
        """These settings with every field that ``other`` sets (not None) taking precedence;
        ``extra_body`` dicts are merged, ``other``'s keys winning."""
        if other is None:
            return Sampling(**{**self.__dict__, "extra_body": dict(self.extra_body)})
        merged = {k: (v if v is not None else getattr(self, k)) for k, v in other.__dict__.items()}
        merged["extra_body"] = {**self.extra_body, **other.extra_body}
        return Sampling(**merged)

    def for_turn(self, turn: int) -> "Sampling":
        """The settings of an episode's turn ``turn`` (0-based): a seeded episode draws each turn from
        a fresh random stream (seed + TURN_SEED_STEP × turn), reproducible per episode. One seed for
        every turn would reuse the same uniform numbers, so a turn's draw would depend on the draws
        that shaped the conversation before it (and differently in each engine's sampler)."""
        if self.seed is None or turn == 0:
            return self
        return Sampling(**{**self.__dict__, "seed": self.seed + TURN_SEED_STEP * turn,
                           "extra_body": dict(self.extra_body)})


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None


@dataclass
class ChatResult:
    message: dict[str, Any]            # the assistant message (OpenAI format, see module doc)
    usage: Usage
    latency_s: float                   # wall time of the call, retries included
    finish_reason: str | None = None   # "stop", "tool_calls", "length", ...
    # Local backends only (RL needs the exact sampled tokens, never a re-tokenisation):
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    raw: dict[str, Any] | None = None  # the provider's response, for debugging
    invalid_text: int = 0              # invalid Unicode replaced by U+FFFD in this turn (lis.util.text)
    reply_cut: int = 0                 # the reply was over the backend's size cap: the bytes read, dropped


@runtime_checkable
class ChatModel(Protocol):
    name: str

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             sampling: Sampling | None = None) -> ChatResult:
        """One assistant turn. Raises ModelError when the call fails for good."""
        ...

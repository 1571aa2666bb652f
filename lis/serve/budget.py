"""The episode's completion-token budget (a request's ``max_tokens``) around any ChatModel."""
from __future__ import annotations

import threading
from typing import Any

from lis.models.base import ChatModel, ChatResult, ContextLengthError, Sampling


class BudgetedModel:
    """``model`` with at most ``budget`` completion tokens over all calls: each call asks for at most
    what is left (``max_tokens``), and a call once it is spent raises ContextLengthError, which the
    agent loop ends as ``token_budget``. ``sampling`` overrides what the loop passes (a request's
    temperature, top_p, seed)."""

    def __init__(self, model: ChatModel, budget: int, sampling: Sampling | None = None):
        self.model = model
        self.name = model.name
        self.budget = budget
        self.used = 0
        self.sampling = sampling
        self._lock = threading.Lock()

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             sampling: Sampling | None = None) -> ChatResult:
        with self._lock:
            left = self.budget - self.used
        if left <= 0:
            raise ContextLengthError(f"the request's completion-token budget ({self.budget}) is spent",
                                     "ask for more with max_tokens (up to serve.limits.max_completion_tokens)")
        s = (sampling or Sampling()).override(self.sampling)
        s.max_tokens = min(s.max_tokens or left, left)
        res = self.model.chat(messages, tools, s)
        with self._lock:
            self.used += res.usage.completion_tokens or 0
        return res

"""Scripted turns for a random-init policy: short, varied episodes through the real machinery.

    policy.wrap_engine(lambda inner: ScriptedTurns(inner, policy.model, policy.tokenizer, free_cap=24))

A random model fills every budget and never calls a tool, so this engine sits in front of the policy's
real one and gives the episodes of a group the :data:`KINDS` in arrival order: ``right`` (forced: the
answer grepped from the document, then ``submit``), ``wrong`` (forced: ``0``, then ``submit``), ``free``
(sampled, at most ``free_cap`` tokens a turn, until the turn budget ends it) and ``malformed`` (a forced
call with broken JSON, then free turns). A forced turn's log-probabilities are the policy's own at the
sampling temperature, so the importance ratio means what it means for sampled turns.
"""
from __future__ import annotations

import threading
from typing import Any

import torch

from lis.models.sampler import Draw
from lis.models.scripted import assistant, tool_call
from lis.models.toolcalls import arguments_as_dicts

KINDS = ("right", "right", "right", "wrong", "wrong", "free", "free", "malformed")
ANSWER_CMD = ("grep -h -i 'population' /testbed/documents/* | grep -o -E '[0-9]+' | head -1 > /testbed/answer.txt; "
              "cat /testbed/answer.txt")


def assistant_ids(tokenizer: Any, message: dict[str, Any]) -> list[int]:
    """The canonical ids of an assistant ``message`` as the chat template renders it (content, tool calls),
    up to and including its end-of-turn token: what a policy "samples" when the turn is scripted."""
    user = [{"role": "user", "content": "x"}]
    head = tokenizer.apply_chat_template(user, add_generation_prompt=True, tokenize=False)
    both = tokenizer.apply_chat_template(arguments_as_dicts(user + [message]), tokenize=False)
    text = both[len(head):]
    text = text[: text.rindex(tokenizer.eos_token) + len(tokenizer.eos_token)]
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


class ScriptedTurns:
    """An engine (the ``generate`` signature of :class:`lis.models.batch_engine.BatchEngine`) that
    forces or caps each episode's turns by its kind (module doc); the rest goes to ``inner``."""

    def __init__(self, inner: Any, model: Any, tokenizer: Any, *, free_cap: int = 24, kinds: tuple[str, ...] = KINDS):
        self.inner, self.model, self.tokenizer = inner, model, tokenizer
        self.free_cap, self.kinds = int(free_cap), tuple(kinds)
        self._lock = threading.Lock()
        self._starts: dict[tuple[int, ...], int] = {}      # first prompt -> episodes started with it
        self._live: list[tuple[list[int], str, int]] = []  # (context so far, kind, turns done)
        self.forced = self.sampled = 0
        self.stats = getattr(inner, "stats", {})

    # -- the engine interface -------------------------------------------------------------------
    def generate(self, prompt_ids: list[int], max_new_tokens: int, *, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, repetition_penalty: float | None = None,
                 seed: int | None = None, generator: Any = None, stop_ids: set[int] | None = None) -> Draw:
        kind, turn = self._episode(prompt_ids)
        forced = self._script(kind, turn)
        if forced is not None and len(forced) <= max_new_tokens:
            draw = Draw(forced, self._logprobs(prompt_ids, forced, temperature), True)
            with self._lock:
                self.forced += 1
        else:
            kw = {} if stop_ids is None else {"stop_ids": stop_ids}
            draw = self.inner.generate(prompt_ids, min(max_new_tokens, self.free_cap), temperature=temperature,
                                       top_k=top_k, top_p=top_p, repetition_penalty=repetition_penalty, seed=seed,
                                       generator=generator, **kw)
            with self._lock:
                self.sampled += 1
        with self._lock:
            self._live.append((list(prompt_ids) + list(draw.ids), kind, turn + 1))
        return draw

    def forget_prefixes(self) -> None:
        if hasattr(self.inner, "forget_prefixes"):
            self.inner.forget_prefixes()

    def max_model_len(self) -> int | None:
        limit = getattr(self.inner, "max_model_len", None)
        return limit() if callable(limit) else limit

    def close(self) -> None:
        if hasattr(self.inner, "close"):
            self.inner.close()

    # -- episodes and scripts -----------------------------------------------------------------------
    def _episode(self, prompt_ids: list[int]) -> tuple[str, int]:
        """(kind, turns done) of the episode this call continues, or a new episode's."""
        with self._lock:
            for i, (context, kind, turns) in enumerate(self._live):
                if len(context) <= len(prompt_ids) and prompt_ids[:len(context)] == context:
                    del self._live[i]
                    return kind, turns
            key = tuple(prompt_ids)
            n = self._starts.get(key, 0)
            self._starts[key] = n + 1
            return self.kinds[n % len(self.kinds)], 0

    def _script(self, kind: str, turn: int) -> list[int] | None:
        """The forced ids of this turn, or None (sample it)."""
        if kind == "right" and turn == 0:
            return self._assistant(None, "execute_bash", {"command": ANSWER_CMD})
        if kind == "wrong" and turn == 0:
            return self._assistant(None, "execute_bash", {"command": "echo 0 > /testbed/answer.txt"})
        if kind in ("right", "wrong") and turn == 1:
            return self._assistant("Done.", "submit", {})
        if kind == "malformed" and turn == 0:
            text = '<tool_call>\n{"name": "execute_bash", "arguments": {"command": "ls /testbed\n</tool_call>'
            return self._text(text)
        return None

    def _assistant(self, content: str | None, tool: str, arguments: dict[str, Any]) -> list[int]:
        return assistant_ids(self.tokenizer, assistant(content, tool_call(tool, arguments, "r0")))

    def _text(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"]) + [self.tokenizer.eos_token_id]

    def _logprobs(self, prompt_ids: list[int], forced: list[int], temperature: float) -> list[float]:
        """The policy's log-probability of each forced id after the prompt and the ids before it."""
        device = next(self.model.parameters()).device
        ids = torch.tensor([list(prompt_ids) + forced], dtype=torch.long, device=device)
        with torch.no_grad():
            logits = self.model(input_ids=ids).logits[0, len(prompt_ids) - 1:-1].float()
        lp = torch.log_softmax(logits / (temperature or 1.0), dim=-1)
        return lp.gather(-1, torch.tensor(forced, device=device).unsqueeze(-1)).squeeze(-1).tolist()

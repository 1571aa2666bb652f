"""Token-exact episodes: the ids the policy sampled plus the environment's ids, never re-tokenised text.

    session = TokenSession(policy, max_prompt_tokens=16384, max_episode_tokens=65536)
    record = run_task(task, session, "sandbox", cfg, pool=pool)      # the agent's own loop
    session.prompt_ids, session.completion_ids, session.mask, session.logprobs

A TokenSession is the ChatModel of one episode. Its first call renders the prompt; every later call
appends the environment's ids with mask 0, samples the policy's turn from exactly the ids so far and
appends it with mask 1 and its log-probabilities, so GRPO trains on what the policy saw and sampled.
A turn's environment ids are the tokens of the template's text for the new messages: the conversation
rendered up to the next generation prompt minus the render up to the policy's last end-of-turn token
(special tokens delimit the piece, so tokenising it alone gives a full render's ids). ``drift_turns``
counts turns whose ids differ from a full re-tokenisation: a diagnostic only.
"""
from __future__ import annotations

import time
from typing import Any

from lis.models.base import ChatResult, ContextLengthError, Sampling, Usage
from lis.models.toolcalls import arguments_as_dicts


class TokenSession:
    """One episode's token state behind the ChatModel interface (the agent loop calls ``chat``)."""

    def __init__(self, policy: Any, *, max_prompt_tokens: int, max_episode_tokens: int,
                 sampling: Sampling | None = None, name: str = "policy"):
        self.policy = policy                     # a LocalHFModel (render, generate_ids, parse, stop_ids)
        self.tokenizer = policy.tokenizer
        self.name = name
        self.max_prompt_tokens = max_prompt_tokens
        self.max_episode_tokens = max_episode_tokens
        self.sampling = sampling
        self.prompt_ids: list[int] | None = None
        self.completion_ids: list[int] = []
        self.mask: list[int] = []                # 1: sampled by the policy (trained on); 0: environment
        self.logprobs: list[float] = []
        self.turns = 0
        self.drift_turns = 0
        self.isolated_renders = 0                # turns whose env ids came from rendering the new messages alone
        self._seen = 0                           # messages already in the ids (the last: the policy's turn)
        self._end_ids = set(policy.stop_ids)

    # -- the ChatModel interface --------------------------------------------------------------------
    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             sampling: Sampling | None = None) -> ChatResult:
        t0 = time.perf_counter()
        if self.prompt_ids is None:
            self.prompt_ids = self.policy.render(messages, tools)
            if len(self.prompt_ids) > self.max_prompt_tokens:
                raise ContextLengthError(f"prompt of {len(self.prompt_ids)} tokens exceeds the prompt budget "
                                         f"{self.max_prompt_tokens}", "raise grpo.max_prompt_tokens",
                                         limit=self.max_prompt_tokens, prompt_tokens=len(self.prompt_ids))
        else:
            self._extend(self.env_ids(messages, tools), 0)
        context = self.prompt_ids + self.completion_ids
        if self.policy.render(messages, tools) != context:
            self.drift_turns += 1
        room = self.max_episode_tokens - len(self.completion_ids)
        if room <= 0:
            raise ContextLengthError(f"episode of {len(self.completion_ids)} tokens reached its budget "
                                     f"{self.max_episode_tokens}", "raise grpo.max_episode_tokens",
                                     limit=self.max_episode_tokens, prompt_tokens=len(context))
        s = (self.sampling or Sampling()).override(sampling)
        s = s.for_turn(self.turns)  # a fresh random stream per turn, reproducible per episode
        max_new = min(s.max_tokens or room, room)
        draw = self.policy.generate_ids(context, max_new, s)
        self._extend(draw.ids, 1, draw.logprobs)
        self.turns += 1
        message = self.policy.parse(draw.ids, context, tools)
        self._seen = len(messages) + 1
        finish = "tool_calls" if message.get("tool_calls") else ("stop" if draw.stopped else "length")
        return ChatResult(message=message, usage=Usage(len(context), len(draw.ids), 0),
                          latency_s=time.perf_counter() - t0, finish_reason=finish, prompt_ids=context,
                          completion_ids=list(draw.ids), logprobs=list(draw.logprobs))

    # -- the environment's ids ----------------------------------------------------------------------
    def env_ids(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[int]:
        """The ids between the policy's last sampled token and its next turn (see the module doc)."""
        tok = self.tokenizer
        conv = arguments_as_dicts(messages)
        prev, new = conv[: self._seen], conv[self._seen:]
        before = tok.apply_chat_template(prev, tools=tools or None, tokenize=False)
        full = tok.apply_chat_template(conv, tools=tools or None, add_generation_prompt=True, tokenize=False)
        end = tok.eos_token or ""
        cut = before.rfind(end) + len(end) if end and end in before else len(before)
        if full.startswith(before):
            text = before[cut:] + full[len(before):]
        else:  # earlier turns render differently now: render the new messages on their own
            self.isolated_renders += 1
            text = before[cut:] + tok.apply_chat_template(new, tools=None, add_generation_prompt=True, tokenize=False)
        closing = [] if self.completion_ids and self.completion_ids[-1] in self._end_ids else [tok.eos_token_id]
        return closing + list(tok(text, add_special_tokens=False)["input_ids"])

    def _extend(self, ids: list[int], mask: int, logprobs: list[float] | None = None) -> None:
        self.completion_ids += ids
        self.mask += [mask] * len(ids)
        self.logprobs += list(logprobs) if logprobs is not None else [0.0] * len(ids)

    # -- what training needs ------------------------------------------------------------------------
    def sample(self) -> dict[str, Any]:
        """prompt_ids, completion_ids, logprobs and env_mask (1 = sampled) of the episode."""
        return {"prompt_ids": list(self.prompt_ids or []), "completion_ids": list(self.completion_ids),
                "logprobs": list(self.logprobs), "env_mask": list(self.mask)}


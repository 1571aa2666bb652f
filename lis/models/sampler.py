"""Token-by-token sampling with a KV cache: the exact ids drawn and their log-probabilities.

Our own loop (instead of ``model.generate``) so that a ``torch.Generator`` seeds each call
(reproducible without touching the global RNG, safe beside other threads) and so that the
log-probability of every sampled token is known exactly. The log-probability reported is the
one RL recomputes at training time: ``log_softmax(logits / temperature)`` of the model's raw
logits (greedy: temperature 1), before top-k / top-p / repetition-penalty shaping.

:func:`sample` draws one sequence alone; :class:`lis.models.batch_engine.BatchEngine` draws many
at once with the same per-token rule (:func:`pick_token`).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch

from lis.util import cancel


@dataclass
class Draw:
    ids: list[int]
    logprobs: list[float]
    stopped: bool  # ended on a stop token (else: hit max_new_tokens)


def shape_logits(logits: torch.Tensor, seen: torch.Tensor | None, temperature: float, top_k: int | None,
                 top_p: float | None, repetition_penalty: float | None) -> torch.Tensor:
    """The logits (1-D, float32) that the next token is drawn from (after every sampling setting)."""
    x = logits.clone()
    if repetition_penalty is not None and repetition_penalty != 1.0 and seen is not None and seen.numel():
        prev = x[seen]
        x[seen] = torch.where(prev > 0, prev / repetition_penalty, prev * repetition_penalty)
    x = x / temperature
    if top_k is not None and 0 < top_k < x.numel():
        kth = torch.topk(x, top_k).values[-1]
        x = x.masked_fill(x < kth, float("-inf"))
    if top_p is not None and 0 < top_p < 1:
        sorted_x, order = torch.sort(x, descending=True)
        cum = torch.softmax(sorted_x, dim=-1).cumsum(dim=-1)
        drop = cum - torch.softmax(sorted_x, dim=-1) >= top_p  # keep the smallest prefix reaching top_p
        x[order[drop]] = float("-inf")
    return x


def pick_token(logits: torch.Tensor, seen: torch.Tensor | None, generator: torch.Generator, temperature: float,
               top_k: int | None, top_p: float | None, repetition_penalty: float | None) -> tuple[int, float]:
    """The next token drawn from ``logits`` (1-D, float32) and its log-probability.

    ``temperature`` 0 means greedy (argmax of the raw logits, log-probability at temperature 1);
    otherwise the token is drawn from the shaped logits with ``generator`` (on the CPU) and the
    log-probability is ``log_softmax(logits / temperature)`` before shaping.
    """
    greedy = temperature == 0
    base = torch.log_softmax(logits / (1.0 if greedy else temperature), dim=-1)
    if greedy:
        tok = int(torch.argmax(logits))
    else:
        probs = torch.softmax(shape_logits(logits, seen, temperature, top_k, top_p, repetition_penalty), dim=-1)
        tok = int(torch.multinomial(probs.cpu(), 1, generator=generator))
    return tok, float(base[tok])


def last_logits_kwargs(model) -> dict:
    """``{"logits_to_keep": 1}`` when the model's forward takes it (a prefill then computes the
    vocabulary projection of the last position only, not of the whole prompt), else ``{}``."""
    cached = getattr(model, "_lis_last_logits_kwargs", None)
    if cached is None:
        try:
            takes = "logits_to_keep" in inspect.signature(model.forward).parameters
        except (TypeError, ValueError):
            takes = False
        cached = {"logits_to_keep": 1} if takes else {}
        try:
            object.__setattr__(model, "_lis_last_logits_kwargs", cached)
        except (AttributeError, TypeError):
            pass
    return dict(cached)


@torch.inference_mode()
def sample(model, prompt_ids: list[int], max_new_tokens: int, stop_ids: set[int], generator: torch.Generator,
           temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
           repetition_penalty: float | None = None) -> Draw:
    """Draw up to ``max_new_tokens`` tokens after ``prompt_ids``; stop after a token in ``stop_ids``.

    ``temperature`` 0 means greedy. The stop token is included in ``ids``.
    """
    device = next(model.parameters()).device
    seen = torch.tensor(prompt_ids, dtype=torch.long, device=device)
    out = model(input_ids=seen.unsqueeze(0), use_cache=True, **last_logits_kwargs(model))
    ids: list[int] = []
    logprobs: list[float] = []
    for _ in range(max_new_tokens):
        cancel.check()
        tok, lp = pick_token(out.logits[0, -1].float(), seen, generator, temperature, top_k, top_p,
                             repetition_penalty)
        ids.append(tok)
        logprobs.append(lp)
        if tok in stop_ids:
            return Draw(ids, logprobs, True)
        nxt = torch.tensor([[tok]], dtype=torch.long, device=device)
        seen = torch.cat([seen, nxt[0]])
        out = model(input_ids=nxt, past_key_values=out.past_key_values, use_cache=True)
    return Draw(ids, logprobs, False)

"""Token-by-token sampling with a KV cache: the exact ids drawn and their log-probabilities.

Our own loop (instead of ``model.generate``) so that a ``torch.Generator`` seeds each call
(reproducible without touching the global RNG, safe beside other threads) and so that the
log-probability of every sampled token is known exactly.

The log-probability reported is the *sampling* log-probability: that of the token under the
distribution it was drawn from, after every setting (repetition penalty, temperature, top-k, top-p),
as vLLM reports with ``--logprobs-mode processed_logprobs``, so every engine's log-probabilities mean
the same thing (docs/training.md, "One sampling policy"); with truncation it differs from
``log_softmax(logits / temperature)`` by the log of the mass kept, which an importance-sampling ratio
between trainer and sampler must see. Greedy draws report ``log_softmax`` of the raw logits.

:func:`sample` draws one sequence alone; :class:`lis.models.batch_engine.BatchEngine` draws many
at once with the same per-token rule (:func:`pick_tokens`, batched over the rows of a step).
"""
from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from lis.util import cancel


@dataclass
class Draw:
    ids: list[int]
    logprobs: list[float]
    stopped: bool  # ended on a stop token (else: hit max_new_tokens)


@dataclass
class Rule:
    """How one sequence draws its next token (the settings of :func:`pick_tokens`, one per row)."""
    generator: torch.Generator
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    repetition_penalty: float | None = None
    seen: torch.Tensor | None = None  # prompt + drawn ids (only read for a repetition penalty)


def penalises(penalty: float | None) -> bool:
    """Whether a repetition penalty setting changes anything (None and 1.0 do not)."""
    return penalty is not None and penalty != 1.0


def shape_rows(logits: torch.Tensor, seens: list[torch.Tensor | None] | None, temperature: float,
               top_k: int | None, top_p: float | None, repetition_penalty: float | None) -> torch.Tensor:
    """The logits (2-D, float32, one row per sequence) that each row's next token is drawn from,
    after every sampling setting (the same settings for every row; ``seens``: each row's ids so
    far, for the repetition penalty)."""
    x = logits.clone()
    if penalises(repetition_penalty) and seens is not None:
        for i, seen in enumerate(seens):
            if seen is not None and seen.numel():
                prev = x[i, seen]
                x[i, seen] = torch.where(prev > 0, prev / repetition_penalty, prev * repetition_penalty)
    x = x / temperature
    vocab = x.shape[-1]
    if top_k is not None and 0 < top_k < vocab:
        kth = torch.topk(x, top_k, dim=-1).values[:, -1:]
        x = x.masked_fill(x < kth, float("-inf"))
    if top_p is not None and 0 < top_p < 1:
        # only the finite logits can be kept: after top-k (ties at the k-th included) sort those alone
        m = vocab if top_k is None or not 0 < top_k < vocab else int(torch.isfinite(x).sum(dim=-1).max())
        sorted_x, order = torch.topk(x, m, dim=-1) if m < vocab else torch.sort(x, dim=-1, descending=True)
        probs = torch.softmax(sorted_x, dim=-1)
        drop = probs.cumsum(dim=-1) - probs >= top_p  # keep the smallest prefix reaching top_p
        x = x.scatter(-1, order, sorted_x.masked_fill(drop, float("-inf")))
    return x


def pick_tokens(logits: torch.Tensor, rules: Sequence[Rule]) -> list[tuple[int, float]]:
    """The next token of every row of ``logits`` (2-D, float32) and its log-probability
    (``rules``: one :class:`Rule`, or any object with its attributes, per row).

    Rows that share their settings are shaped together (one batched top-k / top-p). Temperature 0 is
    greedy; otherwise row ``i`` draws one uniform number from ``rules[i].generator`` (on the CPU) and
    takes the token where it falls in the cumulative distribution of its shaped logits.
    """
    out: list[tuple[int, float] | None] = [None] * len(rules)
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rules):
        key = (r.temperature, r.top_k, r.top_p, r.repetition_penalty if penalises(r.repetition_penalty) else None)
        groups.setdefault(key, []).append(i)
    for (temperature, top_k, top_p, penalty), rows in groups.items():
        x = logits if len(rows) == logits.shape[0] else logits[rows]
        if temperature == 0:
            base = torch.log_softmax(x, dim=-1)
            toks = torch.argmax(x, dim=-1)
        else:
            shaped = shape_rows(x, [rules[i].seen for i in rows], temperature, top_k, top_p, penalty)
            base = torch.log_softmax(shaped, dim=-1)
            cdf = torch.softmax(shaped, dim=-1).cumsum(dim=-1)
            u = torch.cat([torch.rand(1, generator=rules[i].generator) for i in rows]).to(cdf.device)
            toks = torch.searchsorted(cdf, (u * cdf[:, -1]).unsqueeze(1), right=True).squeeze(1)
            toks = toks.clamp_(max=x.shape[-1] - 1)
        lps = base.gather(1, toks.unsqueeze(1)).squeeze(1)
        for i, tok, lp in zip(rows, toks.tolist(), lps.tolist()):
            out[i] = (tok, lp)
    return out  # type: ignore[return-value]


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
    """Draw up to ``max_new_tokens`` tokens after ``prompt_ids``; stop after a token in ``stop_ids``
    (included in ``ids``). ``temperature`` 0 means greedy."""
    device = next(model.parameters()).device
    seen = torch.tensor(prompt_ids, dtype=torch.long, device=device)
    out = model(input_ids=seen.unsqueeze(0), use_cache=True, **last_logits_kwargs(model))
    ids: list[int] = []
    logprobs: list[float] = []
    for _ in range(max_new_tokens):
        cancel.check()
        rule = Rule(generator, temperature, top_k, top_p, repetition_penalty, seen)
        tok, lp = pick_tokens(out.logits[0, -1].float().unsqueeze(0), [rule])[0]
        ids.append(tok)
        logprobs.append(lp)
        if tok in stop_ids:
            return Draw(ids, logprobs, True)
        nxt = torch.tensor([[tok]], dtype=torch.long, device=device)
        seen = torch.cat([seen, nxt[0]])
        out = model(input_ids=nxt, past_key_values=out.past_key_values, use_cache=True)
    return Draw(ids, logprobs, False)

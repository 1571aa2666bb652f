"""The policy loss of a GRPO step, as the paper's recipe defines it (its authors' verl script).

    weights, masked = is_weights(trainer_logps, sampler_logps, mask, mode="sequence_mask", cap=3.0)
    per_token = policy_loss(logps, old_logps, advantages, s, weights)
    loss = aggregate(per_token, mask, s.loss_agg, sequences=64, tokens=trained_tokens)

**Per token** (verl's ``compute_policy_loss``, clip-higher and dual clip): with ``r = exp(logp -
old_logp)`` and advantage ``A``, ``l = max(-A r, -A clip(r, 1 - clip_low, 1 + clip_high))``, and for
``A < 0`` also ``l = min(l, -A clip_dual)``. On-policy ``r = 1`` and the gradient is ``-A ∇logp``.

**Importance sampling** (``mode``; the paper applies none) weights the loss by the detached
``w = exp(trainer - sampler)`` per token (``token_*``) or per episode (``sequence_*``): ``*_truncate``
clamps ``w`` to ``[floor, cap]``, ``*_mask`` sets it to 0 outside. A sequence's log-ratio grows with
length, so ``sequence_mask`` drops long episodes first.

**Aggregation** (``agg``): ``seq-mean-token-sum`` (the paper's: each episode's token sum, averaged over
episodes), ``token-mean`` or ``seq-mean-token-mean``. The normalisers are the step's on this rank, not a
micro-batch's, so the value does not depend on how the step is split; errored episodes count as
episodes (mask 0), as verl counts every row.
"""
from __future__ import annotations

import math

import torch

from lis.config.training import GrpoSection

AGGREGATIONS = ("seq-mean-token-sum", "token-mean", "seq-mean-token-mean")


def sequence_log_ratios(trainer_logps: torch.Tensor, sampler_logps: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per episode, the sum over its trained tokens of ``trainer - sampler`` log-probability (B,);
    tokens without a sampling log-probability (NaN) count 0."""
    diff = torch.nan_to_num((trainer_logps.detach().double() - sampler_logps.double()) * mask, nan=0.0)
    return diff.sum(-1)


def is_weights(trainer_logps: torch.Tensor, sampler_logps: torch.Tensor | None, mask: torch.Tensor, mode: str,
               cap: float = 3.0, floor: float | None = None) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """The importance-sampling weights (detached; (B, T) for token modes, (B, 1) for sequence modes)
    and what the mask modes dropped ((B, T) or (B,) booleans); (None, None) for mode ``none`` or
    when the rollout gave no sampling log-probabilities."""
    if mode == "none" or sampler_logps is None:
        return None, None
    diff = torch.nan_to_num((trainer_logps.detach() - sampler_logps) * mask, nan=0.0)
    if mode.startswith("sequence"):
        diff = diff.sum(-1, keepdim=True)
    w = torch.exp(diff)
    lo = -math.inf if floor is None else floor
    if mode.endswith("truncate"):
        return w.clamp(min=floor, max=cap), None
    dropped = (w < lo) | (w > cap)
    w = w.masked_fill(dropped, 0.0)
    return w, (dropped.squeeze(-1) if mode.startswith("sequence") else dropped & mask.bool())


def policy_loss(logps: torch.Tensor, old_logps: torch.Tensor, advantages: torch.Tensor, s: GrpoSection,
                weights: torch.Tensor | None = None, ref_logps: torch.Tensor | None = None) -> torch.Tensor:
    """Per-token loss (B, T) before aggregation (module doc). ``advantages``: (B,) or (B, 1)."""
    a = advantages.unsqueeze(1) if advantages.dim() == 1 else advantages
    ratio = torch.exp(logps - old_logps)
    unclipped = -a * ratio
    clipped = -a * torch.clamp(ratio, 1 - s.clip_low, 1 + s.clip_high)
    loss = torch.maximum(unclipped, clipped)
    if s.clip_dual is not None:
        loss = torch.where(a < 0, torch.minimum(loss, -a * s.clip_dual), loss)
    if weights is not None:
        loss = loss * weights
    if s.beta and ref_logps is not None:  # k3 estimate of KL(policy || reference), as TRL's
        loss = loss + s.beta * (torch.exp(ref_logps - logps) - (ref_logps - logps) - 1)
    return loss


def aggregate(per_token: torch.Tensor, mask: torch.Tensor, agg: str, *, sequences: int, tokens: float) -> torch.Tensor:
    """This micro-batch's share of the step's loss (module doc): ``sequences`` and ``tokens`` are the
    step's episodes and trained tokens on this rank."""
    m = mask.to(per_token.dtype)
    if agg == "seq-mean-token-sum":
        return (per_token * m).sum() / max(1, sequences)
    if agg == "token-mean":
        return (per_token * m).sum() / max(1.0, float(tokens))
    if agg == "seq-mean-token-mean":
        return ((per_token * m).sum(-1) / m.sum(-1).clamp(min=1.0)).sum() / max(1, sequences)
    raise ValueError(f"loss aggregation {agg!r} is not one of {', '.join(AGGREGATIONS)}")

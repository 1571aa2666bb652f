"""The policy loss of a GRPO step, as the paper's recipe defines it (its authors' verl 0.5 script).

    weights, masked = is_weights(trainer_logps, sampler_logps, mask, mode="sequence_mask", cap=3.0)
    per_token = policy_loss(logps, old_logps, advantages, s, weights)
    loss = aggregate(per_token, mask, s.loss_agg, sequences=64, tokens=trained_tokens)

**Per token** (verl's ``compute_policy_loss`` with clip-higher and dual clip): with the ratio
``r = exp(logp - old_logp)`` and the episode's advantage ``A``,
``l = max(-A r, -A clip(r, 1 - clip_low, 1 + clip_high))``, and for ``A < 0`` also
``l = min(l, -A c)`` (dual clip, ``c = clip_dual``; None: off). One optimizer step per generation
batch makes ``old_logp`` the trainer's own log-probability of the sampled id (detached), so ``r = 1``
in value and the gradient is ``-A ∇logp`` — the clips act only when a step is split (``num_iterations``
> 1, off-policy data), as in the paper.

**Importance sampling** (``mode``; the paper applies none): the rollout engine's sampling
log-probabilities differ from the trainer's (a vLLM server in bf16, stale weights, another kernel),
and the correction weights each token's loss by ``w = exp(trainer - sampler)`` per token
(``token_*``) or per episode (``sequence_*``, the sum over its trained tokens), detached: ``*_truncate``
cuts ``w`` at ``cap`` (and raises it to ``floor`` when given); ``*_mask`` keeps ``w`` inside
``[floor, cap]`` and sets it to 0 outside (that token, or the whole episode, leaves the loss). A
sequence's log-ratio is a sum over its tokens, so a small per-token drift grows with length: long
episodes are the ones ``sequence_mask`` drops (the step log records the masked fraction and the
log-ratio against length).

**Aggregation** over the step (``agg``): ``seq-mean-token-sum`` — each episode's token sum, averaged
over the step's episodes (the paper's: no length normalisation, an episode weighs by its tokens);
``token-mean`` — the sum over the step's trained tokens divided by their number; ``seq-mean-token-mean``
— each episode's token mean, averaged over episodes. Normalisers are the step's (this rank's
episodes and trained tokens), not a micro-batch's, so the value does not depend on how the step is
split into micro-batches and accumulation steps; under several processes the gradients' average
over ranks makes it the global mean. Errored episodes count as episodes (mask 0, no tokens), as
verl counts every row of its batch.
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

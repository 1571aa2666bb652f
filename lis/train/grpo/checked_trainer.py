"""TRL's GRPOTrainer with the two checks every GRPO step of ours records.

    trainer = CheckedGRPOTrainer(model=..., rollout_func=..., ...)     # as GRPOTrainer
    trainer.checks.take(trainer.accelerator)   # once per optimizer step, on every rank: the step's numbers

1. **Train mode in every loss computation.** TRL weighs a micro-batch by the gradient-accumulation
   count only when the model is in train mode (``mode == "train"``); a micro-batch computed in eval
   mode weighs ``accumulation`` times the others and its metrics are logged as eval. The trainer
   counts loss computations made in eval mode (``loss_calls_eval_mode``; 0 is right).
2. **Sampler–trainer agreement.** In every loss computation, TRL recomputes the per-token
   log-probabilities of the sampled ids (``log_softmax(logits / temperature)`` of the policy being
   trained); the rollout handed in the engine's sampling log-probabilities
   (``sampling_per_token_logps``). Over the trained tokens (``completion_mask × env_mask``) of the
   step, the trainer records the importance-sampling ratio ``exp(trainer − sampler)`` (min, mean,
   max) and the absolute log-prob difference (mean, max). One optimizer step per generation batch
   (on-policy) means every micro-batch is recomputed with the weights the episodes were sampled
   with, so the ratio is 1 up to float rounding when the engines sample what the trainer assumes:
   a top-k the trainer does not know, a bf16 sampler, or stale weights on a vLLM server show here.
   This reads the tensors TRL's own loss computes (no extra forward pass). In vLLM server mode TRL
   also logs its own ``sampling/importance_sampling_ratio/*`` (against its pre-step recomputation).

Both wrap private TRL methods (``_compute_loss``, ``_get_per_token_logps_and_entropies``) of the
pinned TRL 1.16; ``tests/train/test_grpo_checks.py`` fails if their meaning changes.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from trl import GRPOTrainer


class StepChecks:
    """The running numbers of one optimizer step on this rank (see the module doc)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.loss_calls = 0
        self.loss_calls_eval = 0
        self.tokens = 0
        self.ratio_sum = 0.0
        self.ratio_min = math.inf
        self.ratio_max = -math.inf
        self.diff_sum = 0.0
        self.diff_max = 0.0

    def add(self, trainer_logps: torch.Tensor, sampler_logps: torch.Tensor, mask: torch.Tensor) -> None:
        keep = mask.bool() & torch.isfinite(sampler_logps)
        if not keep.any():
            return
        diff = (trainer_logps.detach().float() - sampler_logps.float())[keep]
        ratio = diff.exp()
        self.tokens += int(diff.numel())
        self.ratio_sum += float(ratio.sum())
        self.ratio_min = min(self.ratio_min, float(ratio.min()))
        self.ratio_max = max(self.ratio_max, float(ratio.max()))
        self.diff_sum += float(diff.abs().sum())
        self.diff_max = max(self.diff_max, float(diff.abs().max()))

    def take(self, accelerator: Any = None) -> dict[str, Any]:
        """The step's numbers over every rank (a collective: call it on all ranks), then reset."""
        local = torch.tensor([self.loss_calls, self.loss_calls_eval, self.tokens, self.ratio_sum, self.diff_sum,
                              self.ratio_min, -self.ratio_max, self.diff_max], dtype=torch.float64)
        if accelerator is not None and accelerator.num_processes > 1:
            rows = accelerator.gather(local.to(accelerator.device).unsqueeze(0)).cpu().view(-1, local.numel())
            local = torch.cat([rows[:, :5].sum(0), rows[:, 5:].min(0).values[:2], rows[:, 7:].max(0).values])
        calls, evals, tokens, rsum, dsum, rmin, neg_rmax, dmax = local.tolist()
        self.reset()
        seen = tokens > 0
        return {"loss_calls": int(calls), "loss_calls_eval_mode": int(evals), "trained_tokens": int(tokens),
                "is_ratio_min": round(rmin, 6) if seen else None,
                "is_ratio_mean": round(rsum / tokens, 6) if seen else None,
                "is_ratio_max": round(-neg_rmax, 6) if seen else None,
                "logprob_diff_mean": float(f"{dsum / tokens:.3g}") if seen else None,
                "logprob_diff_max": float(f"{dmax:.3g}") if seen else None}


class CheckedGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` that records :class:`StepChecks` (module doc) in ``self.checks``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.checks = StepChecks()
        self._loss_inputs: dict[str, Any] | None = None

    def _compute_loss(self, model, inputs):
        self.checks.loss_calls += 1
        if not (model.training and self.model.training):
            self.checks.loss_calls_eval += 1
        self._loss_inputs = inputs
        try:
            return super()._compute_loss(model, inputs)
        finally:
            self._loss_inputs = None

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, *args: Any,
                                           **kwargs: Any):
        out = super()._get_per_token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep, *args,
                                                         **kwargs)
        inputs, self._loss_inputs = self._loss_inputs, None  # the loss's first call is the policy's
        if inputs is not None and inputs.get("sampling_per_token_logps") is not None:
            mask = inputs["completion_mask"]
            if inputs.get("tool_mask") is not None:
                mask = mask * inputs["tool_mask"]
            self.checks.add(out[0], inputs["sampling_per_token_logps"], mask)
        return out

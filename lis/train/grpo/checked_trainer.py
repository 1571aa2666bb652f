"""TRL's GRPOTrainer with the paper's loss and the checks every GRPO step of ours records.

    trainer = CheckedGRPOTrainer(model=..., rollout_func=..., ...)     # as GRPOTrainer
    trainer.loss_settings = settings                                      # the paper's loss (lis.train.grpo.loss)
    trainer.step_norms = {"sequences": 64, "tokens": 51234}             # set by the rollout, every step
    trainer.checks.take(trainer.accelerator)   # once per optimizer step, on every rank: the step's numbers

With ``loss_settings`` set, every loss computation is :mod:`lis.train.grpo.loss`'s instead of TRL's
``loss_type``, normalised by ``step_norms`` (this rank's episodes and trained tokens in the step). The
step's loss (its micro-batches' shares, averaged over ranks) is recorded as ``loss_value``.

1. **Train mode in every loss computation.** TRL weighs a micro-batch by the accumulation count only in
   train mode; one computed in eval mode weighs ``accumulation`` times the others and logs as eval.
   Counted as ``loss_calls_eval_mode`` (0 is right).
2. **Sampler–trainer agreement.** Over the step's trained tokens (``completion_mask × env_mask``), the
   importance ratio ``exp(trainer − sampler)`` of TRL's recomputed log-probabilities against the
   engine's (min, mean, max) and the absolute log-prob difference (mean, max). On-policy, the ratio is
   1 up to rounding unless the engine samples something the trainer does not assume (an unknown top-k,
   a bf16 sampler, stale server weights). Read from the tensors TRL's loss computes (no extra forward).
3. **Importance sampling against length.** Per episode, the sequence log-ratio and its trained tokens:
   their mean, extremes and least-squares slope per 1,000 tokens (a bf16 sampler drifts negative with
   length), the pairs, and the fraction the importance-sampling mode masked.

Both wrap private methods of the pinned TRL (``_compute_loss``, ``_get_per_token_logps_and_entropies``);
``tests/train/test_grpo_checks.py`` fails if their meaning changes.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from trl import GRPOTrainer

from lis.train.grpo.checkpoints import checkpoint_bytes, require_disk
from lis.config.training import GrpoSection
from lis.train.grpo.loss import aggregate, is_weights, policy_loss, sequence_log_ratios


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
        self.loss_value = 0.0
        self.is_units = 0          # episodes (sequence modes) or tokens (token modes) the IS mode looked at
        self.is_masked = 0         # ... and masked
        self.seq_pairs: list[tuple[int, float]] = []   # (trained tokens, sequence log-ratio) per episode

    def add_sequences(self, trainer_logps: torch.Tensor, sampler_logps: torch.Tensor, mask: torch.Tensor) -> None:
        lengths = mask.sum(-1)
        ratios = sequence_log_ratios(trainer_logps, sampler_logps, mask)
        self.seq_pairs += [(int(n), round(float(r), 6)) for n, r in zip(lengths.tolist(), ratios.tolist()) if n > 0]

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
                              self.loss_value, self.is_units, self.is_masked,
                              self.ratio_min, -self.ratio_max, self.diff_max], dtype=torch.float64)
        pairs = self.seq_pairs
        ranks = 1
        if accelerator is not None and accelerator.num_processes > 1:
            from accelerate.utils import gather_object

            ranks = accelerator.num_processes
            rows = accelerator.gather(local.to(accelerator.device).unsqueeze(0)).cpu().view(-1, local.numel())
            local = torch.cat([rows[:, :8].sum(0), rows[:, 8:].min(0).values[:2], rows[:, 10:].max(0).values])
            pairs = [p for part in gather_object([pairs]) for p in part]
        calls, evals, tokens, rsum, dsum, loss_sum, units, masked, rmin, neg_rmax, dmax = local.tolist()
        self.reset()
        seen = tokens > 0
        return {"loss_calls": int(calls), "loss_calls_eval_mode": int(evals), "trained_tokens": int(tokens),
                "loss_value": loss_sum / ranks if calls else None,   # DDP averages the ranks' gradients
                "is_masked_fraction": round(masked / units, 6) if units else 0.0,
                **_length_drift(pairs),
                "is_ratio_min": round(rmin, 6) if seen else None,
                "is_ratio_mean": round(rsum / tokens, 6) if seen else None,
                "is_ratio_max": round(-neg_rmax, 6) if seen else None,
                "logprob_diff_mean": float(f"{dsum / tokens:.3g}") if seen else None,
                "logprob_diff_max": float(f"{dmax:.3g}") if seen else None}


PER_TOKEN = ("completion_ids", "completion_mask", "tool_mask", "old_per_token_logps", "sampling_per_token_logps",
             "ref_per_token_logps", "importance_sampling_ratio")


def trim_padding(inputs: dict[str, Any]) -> dict[str, Any]:
    """The micro-batch without the columns that are padding in every row: TRL pads the whole generation
    batch to its longest episode, so a short episode's micro-batch would run the longest one's forward
    pass with a tokens² attention mask. Masked positions add 0 to the loss, so its value is unchanged."""
    pm, cm = inputs["prompt_mask"], inputs["completion_mask"]
    lead = int((pm.sum(0) == 0).long().cumprod(0).sum())                       # all-padding prompt columns
    width = int(cm.size(1) - (cm.sum(0) == 0).long().flip(0).cumprod(0).sum())  # up to the last real column
    width = max(1, width)
    if lead == 0 and width == cm.size(1):
        return inputs
    out = dict(inputs)
    out["prompt_ids"], out["prompt_mask"] = inputs["prompt_ids"][:, lead:], pm[:, lead:]
    for k in PER_TOKEN:
        v = inputs.get(k)
        if isinstance(v, torch.Tensor) and v.dim() == 2 and v.size(1) == cm.size(1):
            out[k] = v[:, :width]
    return out


def _trained_mask(inputs: dict[str, Any]) -> torch.Tensor:
    """The completion positions trained on: sampled, not the environment's (TRL's ``tool_mask``)."""
    mask = inputs["completion_mask"]
    return mask if inputs.get("tool_mask") is None else mask * inputs["tool_mask"]


def _length_drift(pairs: list[tuple[int, float]]) -> dict[str, Any]:
    """The sequence log-ratios of a step against episode length (see the module doc, check 3)."""
    if not pairs:
        return {"seq_logratio_mean": None, "seq_logratio_min": None, "seq_logratio_max": None,
                "seq_logratio_per_1k_tokens": None, "seq_logratio_by_length": []}
    n = len(pairs)
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in pairs) / sxx if sxx else None
    return {"seq_logratio_mean": round(my, 6), "seq_logratio_min": round(min(ys), 6),
            "seq_logratio_max": round(max(ys), 6),
            "seq_logratio_per_1k_tokens": None if slope is None else float(f"{slope * 1000:.4g}"),
            "seq_logratio_by_length": sorted(pairs)}


class CheckedGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` that records :class:`StepChecks` (module doc) in ``self.checks`` and, with
    ``loss_settings`` set, computes :mod:`lis.train.grpo.loss`'s loss."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.checks = StepChecks()
        self._loss_inputs: dict[str, Any] | None = None
        self.loss_settings: GrpoSection | None = None
        self.step_norms: dict[str, float] | None = None
        self.checkpoint_policy: dict[str, Any] | None = None   # grpo.checkpoints: keep, optimizer

    def _save_checkpoint(self, model, trial):
        """Check the disk before every checkpoint (lis.train.grpo.checkpoints), then save as TRL does."""
        if self.checkpoint_policy is not None and self.args.should_save:
            need = checkpoint_bytes(self.accelerator.unwrap_model(self.model),
                                    optimizer=bool(self.checkpoint_policy.get("optimizer", True)))
            require_disk(self.args.output_dir, need, step=self.state.global_step,
                         keep=int(self.checkpoint_policy.get("keep", 2)))
        super()._save_checkpoint(model, trial)

    def _compute_loss(self, model, inputs):
        self.checks.loss_calls += 1
        if not (model.training and self.model.training):
            self.checks.loss_calls_eval += 1
        self._loss_inputs = inputs
        try:
            if self.loss_settings is None:
                return super()._compute_loss(model, inputs)
            return self._paper_loss(model, inputs, self.loss_settings)
        finally:
            self._loss_inputs = None

    def _paper_loss(self, model, inputs, s: GrpoSection) -> torch.Tensor:
        """The step's loss share of this micro-batch (lis.train.grpo.loss), with TRL's metrics."""
        if not self.step_norms:
            raise RuntimeError("CheckedGRPOTrainer.step_norms is not set: the rollout sets it every step")
        inputs = trim_padding(inputs)
        self._loss_inputs = inputs  # the IS check (below) reads the same, trimmed tensors
        prompt_ids, completion_ids = inputs["prompt_ids"], inputs["completion_ids"]
        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
        mask = _trained_mask(inputs)
        logps, entropies, _ = self._get_per_token_logps_and_entropies(model, input_ids, attention_mask,
                                                                     completion_ids.size(1), compute_entropy=True)
        old = inputs.get("old_per_token_logps")
        old = logps.detach() if old is None else old
        sampler = inputs.get("sampling_per_token_logps")
        isc = s.importance_sampling
        weights, dropped = is_weights(old, sampler, mask, isc.mode, isc.max, isc.min)
        per_token = policy_loss(logps, old, inputs["advantages"], s, weights, inputs.get("ref_per_token_logps"))
        loss = aggregate(per_token, mask, s.loss_agg, sequences=int(self.step_norms["sequences"]),
                         tokens=float(self.step_norms["tokens"]))
        if sampler is not None:
            self.checks.add_sequences(old, sampler, mask)
        if dropped is not None:
            self.checks.is_masked += int(dropped.sum())
            self.checks.is_units += int(dropped.numel()) if dropped.dim() == 1 else int(mask.sum())
        elif s.importance_sampling.mode.startswith("sequence"):
            self.checks.is_units += int(mask.size(0))
        elif s.importance_sampling.mode != "none":
            self.checks.is_units += int(mask.sum())
        self.checks.loss_value += float(loss.detach())
        self._log_loss_metrics(logps, old, entropies, inputs["advantages"], mask, s)
        return loss

    def _log_loss_metrics(self, logps, old, entropies, advantages, mask, s: GrpoSection) -> None:
        """TRL's per-step metrics of the loss (entropy, clipped fractions), over trained tokens."""
        mode = "train" if self.model.training else "eval"
        a = advantages.unsqueeze(1) if advantages.dim() == 1 else advantages
        ratio = torch.exp(logps.detach() - old)
        m = mask.bool()
        n = max(1, int(m.sum()))

        def share(x: torch.Tensor) -> float:
            return float((x & m).sum()) / n

        self._metrics[mode]["entropy"].append(float((entropies.detach() * mask).sum()) / n)
        self._metrics[mode]["clip_ratio/low_mean"].append(share((ratio < 1 - s.clip_low) & (a < 0)))
        self._metrics[mode]["clip_ratio/high_mean"].append(share((ratio > 1 + s.clip_high) & (a > 0)))
        if s.clip_dual is not None:
            self._metrics[mode]["clip_ratio/dual_mean"].append(share((ratio > s.clip_dual) & (a < 0)))

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, *args: Any,
                                           **kwargs: Any):
        out = super()._get_per_token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep, *args,
                                                         **kwargs)
        inputs, self._loss_inputs = self._loss_inputs, None  # the loss's first call is the policy's
        if inputs is not None and inputs.get("sampling_per_token_logps") is not None:
            self.checks.add(out[0], inputs["sampling_per_token_logps"], _trained_mask(inputs))
        return out

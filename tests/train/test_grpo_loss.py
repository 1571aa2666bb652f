"""The paper's GRPO loss, computed by hand, against the trainer's (lis.train.grpo.loss through
CheckedGRPOTrainer._compute_loss, TRL's fused log-prob head underneath).

The hand computation is written here from verl 0.5's definition (compute_policy_loss with clip-higher
and dual clip, agg_loss "seq-mean-token-sum": each sequence's token sum, averaged over sequences),
in float64 numpy from an independent forward pass of the same model, on a small batch whose old and
sampling log-probabilities are moved off the policy's so that every clip and the importance weights
act. Before this work the trainer computed TRL's ``dr_grpo`` (the token sum divided by
batch x max_completion_length): with ``loss_settings = None`` (TRL's own loss, what the trainer ran)
the first test's value is off by that factor and fails.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tests import sections

pytestmark = [pytest.mark.training]

P, C, B = 6, 9, 4           # prompt length, completion width, sequences
CLIP_LOW, CLIP_HIGH, DUAL = 0.2, 0.28, 3.0


@pytest.fixture(scope="module")
def trainer(tiny_base_dir, tmp_path_factory):
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig

    from lis.train.grpo.checked_trainer import CheckedGRPOTrainer

    tok = AutoTokenizer.from_pretrained(tiny_base_dir)
    args = GRPOConfig(output_dir=str(tmp_path_factory.mktemp("trl")), per_device_train_batch_size=B,
                      gradient_accumulation_steps=1, num_generations=2, max_completion_length=64, use_cpu=True,
                      bf16=False, report_to="none", save_strategy="no", disable_tqdm=True, beta=0.0, loss_type="dr_grpo",
                      epsilon=CLIP_LOW, epsilon_high=CLIP_HIGH, temperature=1.0, remove_unused_columns=False,
                      dataloader_num_workers=0, seed=0)
    t = CheckedGRPOTrainer(model=str(tiny_base_dir), reward_funcs=[lambda completions, **kw: [0.0] * len(completions)],
                           args=args, train_dataset=Dataset.from_list([{"prompt": "x"}] * 4), processing_class=tok)
    t.model.train()
    return t


def _batch(vocab: int, seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    lengths = [9, 5, 7, 2]                               # trained completion lengths (right padding after)
    completion_mask = torch.zeros(B, C, dtype=torch.long)
    for i, n in enumerate(lengths):
        completion_mask[i, :n] = 1
    tool_mask = torch.ones(B, C, dtype=torch.long)
    tool_mask[0, 3:5] = 0                                 # environment tokens inside an episode: not trained
    tool_mask[2, 1] = 0
    return {"prompt_ids": torch.randint(10, vocab, (B, P), generator=g),
            "prompt_mask": torch.ones(B, P, dtype=torch.long),
            "completion_ids": torch.randint(10, vocab, (B, C), generator=g),
            "completion_mask": completion_mask, "tool_mask": tool_mask,
            "advantages": torch.tensor([0.75, -0.5, -1.25, 0.4])}


def _true_logps(model, batch) -> np.ndarray:
    """log p(completion token | prefix) of every completion position, float64, independent of TRL."""
    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], 1)
    mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], 1)
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask).logits.double()
    lp = torch.log_softmax(logits[:, P - 1:-1], -1)
    return lp.gather(-1, batch["completion_ids"].unsqueeze(-1)).squeeze(-1).numpy()


def _hand_loss(logp, old, sampler, adv, mask, agg: str, is_mode: str, cap: float, floor: float | None) -> float:
    """verl's per-token loss with clip-higher and dual clip, the IS weights, then the aggregation."""
    a = adv[:, None]
    ratio = np.exp(logp - old)
    l1 = -a * ratio
    l2 = -a * np.clip(ratio, 1 - CLIP_LOW, 1 + CLIP_HIGH)
    loss = np.maximum(l1, l2)
    loss = np.where(a < 0, np.minimum(loss, -a * DUAL), loss)
    d = (old - sampler) * mask
    if is_mode != "none":
        w = np.exp(d.sum(-1, keepdims=True)) if is_mode.startswith("sequence") else np.exp(d)
        if is_mode.endswith("truncate"):
            w = np.minimum(w, cap) if floor is None else np.clip(w, floor, cap)
        else:
            w = np.where((w > cap) | (w < (floor if floor is not None else -math.inf)), 0.0, w)
        loss = loss * w
    if agg == "seq-mean-token-sum":
        return float((loss * mask).sum(-1).mean())
    if agg == "token-mean":
        return float((loss * mask).sum() / mask.sum())
    return float(((loss * mask).sum(-1) / np.maximum(mask.sum(-1), 1)).mean())


CASES = [("seq-mean-token-sum", "none", 3.0, None), ("seq-mean-token-sum", "token_truncate", 1.05, None),
         ("seq-mean-token-sum", "sequence_mask", 1.5, 0.5), ("seq-mean-token-sum", "token_mask", 1.1, 0.95),
         ("seq-mean-token-sum", "sequence_truncate", 1.2, 0.9), ("token-mean", "none", 3.0, None),
         ("seq-mean-token-mean", "token_truncate", 1.05, None)]


@pytest.mark.parametrize("agg,is_mode,cap,floor", CASES)
def test_the_trainers_loss_is_the_papers_computed_by_hand(trainer, agg, is_mode, cap, floor):
    """Off-policy old log-probs (ratios from 0.5 to 1.6: both clips and the dual clip act, on positive
    and negative advantages) and sampler log-probs off by up to ±0.15 per token (importance weights,
    masks and caps act). The trainer's value within 1e-6 of the hand computation."""
    batch = _batch(trainer.model.config.vocab_size)
    logp = _true_logps(trainer.model, batch)
    mask = (batch["completion_mask"] * batch["tool_mask"]).numpy().astype(np.float64)
    rng = np.random.default_rng(1)
    old = logp + np.log(rng.uniform(0.62, 2.0, logp.shape))      # ratio = exp(logp - old) in [0.5, 1.6]
    sampler = old + rng.uniform(-0.15, 0.15, logp.shape)
    inputs = {**batch, "old_per_token_logps": torch.tensor(old, dtype=torch.float32),
              "sampling_per_token_logps": torch.tensor(sampler, dtype=torch.float32)}
    old32, sampler32 = inputs["old_per_token_logps"].double().numpy(), inputs["sampling_per_token_logps"].double().numpy()
    trainer.loss_settings = sections.grpo(loss_agg=agg, clip_low=CLIP_LOW, clip_high=CLIP_HIGH, clip_dual=DUAL,
                                          importance_sampling={"mode": is_mode, "max": cap, "min": floor})
    trainer.step_norms = {"sequences": B, "tokens": float(mask.sum())}
    got = float(trainer._compute_loss(trainer.model, inputs).detach())
    want = _hand_loss(logp, old32, sampler32, batch["advantages"].double().numpy(), mask, agg, is_mode, cap, floor)
    ratio = np.exp(logp - old32)[mask > 0]
    assert ratio.min() < 1 - CLIP_LOW and ratio.max() > 1 + CLIP_HIGH  # the clips are exercised
    assert abs(got - want) < 1e-6, (got, want)


def test_the_loss_does_not_depend_on_how_the_step_is_split_into_micro_batches(trainer):
    """The step's normalisers, not the micro-batch's: the four sequences as one micro-batch, or as four
    of one (gradient accumulation), sum to the same loss."""
    batch = _batch(trainer.model.config.vocab_size, seed=3)
    mask = batch["completion_mask"] * batch["tool_mask"]
    trainer.loss_settings = sections.grpo()  # the paper's
    trainer.step_norms = {"sequences": B, "tokens": float(mask.sum())}
    whole = float(trainer._compute_loss(trainer.model, batch).detach())
    parts = sum(float(trainer._compute_loss(trainer.model, {k: v[i:i + 1] for k, v in batch.items()}).detach())
                for i in range(B))
    assert abs(whole - parts) < 1e-6, (whole, parts)


def test_padding_every_row_shares_is_cut_and_the_loss_is_unchanged(trainer):
    """TRL pads the generation batch to its longest episode: columns that are padding in every row of a
    micro-batch are cut before the forward pass (no tokens x tokens attention mask at paper lengths), and
    the loss is the unpadded batch's."""
    from lis.train.grpo.checked_trainer import trim_padding
    batch = _batch(trainer.model.config.vocab_size, seed=5)
    mask = batch["completion_mask"] * batch["tool_mask"]
    trainer.loss_settings = sections.grpo()  # the paper's
    trainer.step_norms = {"sequences": B, "tokens": float(mask.sum())}
    plain = float(trainer._compute_loss(trainer.model, batch).detach())
    padded = dict(batch)
    padded["prompt_ids"] = torch.cat([torch.zeros(B, 5, dtype=torch.long), batch["prompt_ids"]], 1)
    padded["prompt_mask"] = torch.cat([torch.zeros(B, 5, dtype=torch.long), batch["prompt_mask"]], 1)
    for k in ("completion_ids", "completion_mask", "tool_mask"):
        padded[k] = torch.cat([batch[k], torch.zeros(B, 7, dtype=batch[k].dtype)], 1)
    cut = trim_padding(padded)
    assert cut["prompt_ids"].shape == (B, P) and cut["completion_ids"].shape == (B, C)
    assert torch.equal(cut["completion_mask"], batch["completion_mask"])
    assert abs(float(trainer._compute_loss(trainer.model, padded).detach()) - plain) < 1e-6

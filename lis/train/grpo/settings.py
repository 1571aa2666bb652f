"""GRPO settings (params ``grpo``): the paper's recipe at paper scale, smaller on the smoke profile.

The paper's recipe (its released script, rLLM/verl): 8 prompts × 8 samples per step, lr 1e-6
constant, clip ratio 0.2 low / 0.28 high, no KL, RLOO-style advantages (group mean, no std
scaling; RLOO differs by the constant n/(n−1)), ``seq-mean-token-sum`` loss aggregation (each
episode's token sum, averaged over the step's episodes) with verl's dual clip (c = 3) for negative
advantages, no importance-sampling correction, temperature 1.0, 100 turns, 16K prompt and 64K
episode budgets, over-long or max-turn episodes rewarded 0, 150 steps (4B) / 50 (30B), a
checkpoint every 10 steps.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lis.config.training import GrpoSection
from lis.models.base import Sampling
from lis.params import section_model
from lis.train.lora import default_lora


@dataclass
class GRPOSettings:
    prompts_per_step: int = 8
    samples_per_prompt: int = 8
    steps: int = 150
    lr: float = 1e-6
    lr_scheduler: str = "constant"
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    clip_low: float = 0.2
    clip_high: float = 0.28
    beta: float = 0.0
    scale_rewards: str = "none"
    loss_agg: str = "seq-mean-token-sum"   # seq-mean-token-sum | token-mean | seq-mean-token-mean (lis.train.grpo.loss)
    clip_dual: float | None = 3.0
    importance_sampling: dict[str, Any] = field(default_factory=lambda: {"mode": "none", "max": 3.0, "min": None})
    micro_batch: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int | None = 0                # 0 (or None): no top-k
    max_tokens_per_turn: int | None = 16384
    max_turns: int = 100
    max_prompt_tokens: int = 16384
    max_episode_tokens: int = 65536
    overlong_reward: float = 0.0
    retries: int = 2
    save_every: int = 10
    checkpoints: dict[str, Any] = field(default_factory=lambda: {"keep": 2, "optimizer": True})
    precision: dict[str, Any] = field(default_factory=lambda: {"bf16": "auto", "gradient_checkpointing": "auto"})
    lora: dict[str, Any] = field(default_factory=default_lora)
    engine: dict[str, Any] = field(default_factory=lambda: {"max_batch": 64, "max_batch_tokens": 81920})
    rollout: dict[str, Any] = field(default_factory=lambda: {"deterministic": False})  # batches by rule (lockstep)
    seed: int = 0
    threads: int = 0                     # CPU threads for training (0: torch's default)
    sandbox_workers: int = 64            # sandboxes at once (a step's episodes run concurrently)
    sandbox_backend: str | None = None   # docker | bwrap | auto; None: the sandbox section's backend
    vllm: dict[str, Any] = field(default_factory=lambda: {"mode": "none"})   # grpo.vllm: where the policy
    # generates (mode none: in the training process; checked, with its defaults, by ServerMode.from_settings)

    def key(self) -> dict[str, Any]:
        """What a checkpoint depends on: the recipe, not where generation runs (a run resumes after
        moving between in-process generation and a vLLM server, or to another server URL, or to
        another sandbox backend, or with another engine budget or checkpoint policy: the episodes'
        observations are the same)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("vllm", "sandbox_backend", "engine", "checkpoints",
                                                                "rollout")}

    @classmethod
    def from_params(cls, sec: dict[str, Any], overrides: dict[str, Any] | None = None) -> "GRPOSettings":
        """The ``grpo`` section with ``overrides`` (llm_rl's steps and turns, a replicate's seed; None
        leaves a key) over it, checked by the section's model: an unknown key is an error naming it."""
        merged = {**sec, **{k: v for k, v in (overrides or {}).items() if v is not None}}
        checked = section_model(GrpoSection, merged, "grpo", "params")
        return cls(**checked.model_dump(exclude_unset=True))

    def rl_sampling(self, seed: int | None = None) -> "Sampling":
        """The one sampling policy of the rollouts: every field set, so no engine falls back to a
        model's ``generation_config`` (Qwen3-Instruct's says top-k 20) or a server's defaults.
        TRL is given the same temperature / top-p / top-k (``trl_sampling``)."""
        return Sampling(temperature=self.temperature, top_p=1.0 if self.top_p is None else self.top_p,
                        top_k=self.top_k or 0, repetition_penalty=1.0, max_tokens=self.max_tokens_per_turn,
                        seed=seed)

    def trl_sampling(self) -> dict[str, Any]:
        """GRPOConfig's sampling options: the same policy as :meth:`rl_sampling`."""
        s = self.rl_sampling()
        return {"temperature": s.temperature, "top_p": s.top_p, "top_k": s.top_k,
                "repetition_penalty": s.repetition_penalty}

    @property
    def group_batch(self) -> int:
        """Episodes per step (one optimizer step each: on-policy, as the paper)."""
        return self.prompts_per_step * self.samples_per_prompt

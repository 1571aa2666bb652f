"""The training sections: ``base`` (the starting model), ``teacher`` (the smoke profile's
scripted demonstrations), ``sft``, ``grpo`` (the paper's RL recipe) and ``llm_rl``."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from lis.config.base import Auto, NonNegFloat, NonNegInt, PosFloat, PosInt, Section, Share, StageBackend


class Hub(Section):
    model: str
    revision: str | None


class TinyArch(Section):
    hidden_size: Annotated[int, Field(ge=8)]
    intermediate_size: Annotated[int, Field(ge=8)]
    num_hidden_layers: PosInt
    num_attention_heads: PosInt
    num_key_value_heads: PosInt
    head_dim: Annotated[int, Field(ge=2)]


class Tiny(Section):
    """The offline stand-in model (a tiny Qwen3 trained here)."""

    vocab_size: Annotated[int, Field(ge=300)]
    max_context: Annotated[int, Field(ge=256)]
    arch: TinyArch
    stdlib_files: NonNegInt
    corpus_episodes: NonNegInt
    corpus_context_tasks: NonNegInt


class BaseSection(Section):
    """The starting model: the offline tiny Qwen3 built here (tiny), a hub model (hub) or a local folder (path)."""

    source: Literal["tiny", "hub", "path"]
    seed: int
    """tiny: the seed of its weights and corpus"""
    hub: Hub
    path: str | None
    """path: the local model folder copied in"""
    tiny: Tiny

    @model_validator(mode="after")
    def _path_given(self) -> "BaseSection":
        if self.source == "path" and not self.path:
            raise ValueError("source is path but path is empty (set base.path to a local model folder)")
        return self


class TeacherSection(Section):
    model: str
    seed: int
    benchmark_episodes: NonNegInt
    context_episodes: NonNegInt
    vanilla_context_episodes: NonNegInt
    workers: PosInt
    min_reward: Share
    sandbox_backend: StageBackend
    """docker | bwrap | auto; null: the sandbox section's backend"""


class Precision(Section):
    bf16: Auto
    gradient_checkpointing: Auto


class Lora(Section):
    rank: NonNegInt
    """0: full fine-tuning"""
    alpha: PosFloat
    dropout: Annotated[float, Field(ge=0, lt=1)]
    target_modules: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class SftSection(Section):
    steps: NonNegInt
    batch_size: PosInt
    lr: PosFloat
    warmup_ratio: Share
    weight_decay: NonNegFloat
    grad_clip: PosFloat
    """the gradient norm's clip"""
    max_tokens: Annotated[int, Field(ge=16)]
    """longer episodes are not trained on"""
    held_out: Annotated[float, Field(ge=0, lt=1)]
    checkpoint_every: PosInt
    seed: int
    threads: PosInt
    devices: PosInt
    strategy: Literal["auto", "ddp"]
    accelerator: Literal["auto", "cpu", "gpu"]
    precision: Precision
    lora: Lora


class ImportanceSampling(Section):
    mode: Literal["none", "token_truncate", "token_mask", "sequence_truncate", "sequence_mask"]
    max: PosFloat
    min: NonNegFloat | None


class Checkpoints(Section):
    keep: PosInt
    optimizer: bool
    """keep the optimizer state (resume exactly)"""


class Engine(Section):
    """The in-process batching engine's budget."""

    max_batch: PosInt
    max_batch_tokens: Annotated[int, Field(ge=256)]


class Rollout(Section):
    deterministic: bool
    """batch by rule (lockstep) so that a rerun samples the same tokens"""


class Vllm(Section):
    """Where the policy generates: in the training process (mode none) or a vLLM server."""

    mode: Literal["none", "server"]
    base_url: Annotated[str, Field(pattern=r"^https?://")]
    model: str | None
    logprobs_mode: Literal["raw_logprobs", "processed_logprobs"]
    timeout_s: PosFloat
    command: list[str | int] | str | None
    env: dict[str, str | float] = {}
    """environment of the command (e.g. CUDA_VISIBLE_DEVICES of the server's own GPUs)"""
    startup_timeout_s: PosFloat
    sync: Literal["trl", "files"]


class GrpoSection(Section):
    """The paper's RL recipe (lis/train/grpo/settings.py says where each value comes from)."""

    prompts_per_step: PosInt
    samples_per_prompt: Annotated[int, Field(ge=2)]
    steps: PosInt
    lr: PosFloat
    lr_scheduler: Literal["constant", "linear", "cosine"]
    weight_decay: NonNegFloat
    max_grad_norm: PosFloat
    clip_low: PosFloat
    clip_high: PosFloat
    beta: NonNegFloat
    """KL coefficient (0: no KL, as the paper)"""
    scale_rewards: Literal["none", "group", "batch"]
    loss_agg: Literal["seq-mean-token-sum", "token-mean", "seq-mean-token-mean"]
    clip_dual: Annotated[float, Field(gt=1)] | None
    importance_sampling: ImportanceSampling
    micro_batch: PosInt
    temperature: PosFloat
    top_p: Annotated[float, Field(gt=0, le=1)]
    top_k: NonNegInt | None
    """0 or null: no top-k"""
    max_tokens_per_turn: PosInt | None
    max_turns: PosInt
    max_prompt_tokens: Annotated[int, Field(ge=16)]
    max_episode_tokens: Annotated[int, Field(ge=16)]
    overlong_reward: float
    retries: NonNegInt
    save_every: PosInt
    checkpoints: Checkpoints
    precision: Precision
    lora: Lora
    engine: Engine
    rollout: Rollout
    seed: int
    threads: NonNegInt
    """CPU threads for training (0: torch's default)"""
    sandbox_workers: PosInt
    sandbox_backend: StageBackend
    vllm: Vllm = None  # type: ignore[assignment]  # optional, not nullable
    """absent: generation in the training process"""

    @property
    def group_batch(self) -> int:
        """Episodes per step (one optimizer step each: on-policy, as the paper)."""
        return self.prompts_per_step * self.samples_per_prompt


class LlmRlSection(Section):
    """LLM-RL (the paper's baseline: RL without the sandbox); null: as grpo."""

    steps: PosInt | None
    max_turns: PosInt | None

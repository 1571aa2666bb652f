"""GRPO settings: the validated ``grpo`` params section (:class:`lis.config.training.GrpoSection`) as the
stage, the trainer, the rollout and the loss read it. Its values, the paper's recipe, live in params.yaml.
"""
from __future__ import annotations

from typing import Any

from lis.config.training import GrpoSection
from lis.models.base import Sampling
from lis.train.rollout.group import RolloutSettings

# what a checkpoint does not depend on: where generation runs (in process or a vLLM server, its URL), the
# sandbox backend, the engine's budget, the checkpoint policy, lockstep batching (the observations are the same)
NOT_IN_KEY = ("vllm", "sandbox_backend", "engine", "checkpoints", "rollout")


def checkpoint_key(g: GrpoSection) -> dict[str, Any]:
    """What a checkpoint depends on: the recipe (a run resumes after moving between in-process generation and a
    vLLM server, to another sandbox backend, engine budget or checkpoint policy)."""
    return g.model_dump(exclude_unset=True, exclude=set(NOT_IN_KEY))


def rl_sampling(g: GrpoSection, seed: int | None = None) -> Sampling:
    """The one sampling policy of the rollouts: every field set, so no engine falls back to a model's
    ``generation_config`` (Qwen3-Instruct's sets a top-k) or a server's defaults; TRL gets the same
    (:func:`trl_sampling`)."""
    return Sampling(temperature=g.temperature, top_p=g.top_p, top_k=g.top_k or 0, repetition_penalty=1.0,
                    max_tokens=g.max_tokens_per_turn, seed=seed)


def rollout_settings(g: GrpoSection, mode: str = "sandbox") -> RolloutSettings:
    """The rollouts' settings of a run in ``mode``: the section's budgets, reward, retries and rollout mode,
    sampled by :func:`rl_sampling` with the section's seed."""
    return RolloutSettings(max_prompt_tokens=g.max_prompt_tokens, max_episode_tokens=g.max_episode_tokens,
                           overlong_reward=g.overlong_reward, retries=g.retries, mode=mode,
                           sampling=rl_sampling(g, seed=g.seed), deterministic=g.rollout.deterministic)


def trl_sampling(g: GrpoSection) -> dict[str, Any]:
    """GRPOConfig's sampling options: the same policy as :func:`rl_sampling`."""
    s = rl_sampling(g)
    return {"temperature": s.temperature, "top_p": s.top_p, "top_k": s.top_k,
            "repetition_penalty": s.repetition_penalty}

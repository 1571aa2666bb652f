"""Concurrent rollouts: the episodes of a group run at once through the sandbox pool, their turns
batched together by the policy's generation engine, each one token-exact (a TokenSession).

    rollouts = run_group(tasks, policy, settings, pool=pool, seeds=[...])

Every episode is the evaluation's episode (:func:`lis.agent.episode.run_task`: same tools,
observations, prompts and answer file), scored by the evaluation's scorer. Its outcome
(:mod:`lis.train.rollout.outcome`) sets the reward: the score when the policy finished,
``overlong_reward`` for a policy fault, none for an infrastructure error (out of its group's baseline
and of the loss). Only an infrastructure error before the policy acted is run again (up to
``retries`` times, with the same seed).
"""
from __future__ import annotations

import dataclasses
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from lis.agent.episode import run_task
from lis.agent.trajectory import Trajectory, concurrent_output, unordered_output, wall_clock_limited
from lis.context_tasks import episode_mode
from lis.rewards import score
from lis.tasks.schema import Task
from lis.train.rollout.outcome import classify, episode_faults
from lis.train.rollout.session import TokenSession

log = logging.getLogger("lis.train.rollout")


def task_mode(task: Task, mode: str) -> str:
    """The episode mode of ``task`` under a run's mode: sandbox RL runs each task as its variant
    says (the prompt variant puts the documents in the prompt: ``sandbox_inline``); vanilla is vanilla."""
    return episode_mode(task) if mode == "sandbox" else mode


@dataclass
class RolloutSettings:
    """How a group's episodes run: the grpo section's budgets, reward and retries (built from the section by
    :func:`lis.train.grpo.settings.rollout_settings`), the run's mode and the policy's sampling."""

    max_prompt_tokens: int
    max_episode_tokens: int               # the whole multi-turn completion: sampled + environment ids
    overlong_reward: float
    retries: int
    mode: str = "sandbox"                 # sandbox (tools, context in files) | vanilla (LLM-RL: no tools)
    sampling: Any = None                  # lis.models.base.Sampling of the policy (temperature 1.0 in training)
    deterministic: bool = False           # batches by rule (lockstep slots), not by timing: run_group


@dataclass
class Rollout:
    task: Task
    record: Trajectory
    sample: dict[str, Any]                # prompt_ids, completion_ids, logprobs, env_mask
    reward: float                         # what GRPO uses (penalised; meaningless when error: GRPO passes None)
    raw_reward: float | None              # the scorer's
    error: bool = False                   # outcome infra_error: out of the loss and of its group's baseline
    outcome: str = "submitted"            # submitted | wrong | policy_fault | infra_error (lis.train.rollout.outcome)
    fault: str | None = None              # the policy fault that ended it (turn_budget, token_budget, oom, ...)
    drift: bool = False
    attempts: int = 1
    stats: dict[str, Any] = field(default_factory=dict)


def run_episode(task: Task, policy: Any, agent_cfg, settings: RolloutSettings, *, pool=None, seed: int = 0,
                scorer=None) -> Rollout:
    """One token-exact episode of ``task``; an infrastructure error before the policy acted is run again."""
    attempts = 0
    while True:
        attempts += 1
        session = TokenSession(policy, max_prompt_tokens=settings.max_prompt_tokens,
                               max_episode_tokens=settings.max_episode_tokens,
                               sampling=dataclasses.replace(settings.sampling, seed=seed)
                               if settings.sampling is not None else None)
        rec = run_task(task, session, task_mode(task, settings.mode), agent_cfg, pool=pool, seed=seed, repeat=0)
        acted = any(session.mask)
        raw = _score(task, rec, scorer) if rec.termination in ("submitted", "answered") else None
        outcome, fault = classify(rec, acted=acted, reward=raw)
        if outcome != "infra_error" or acted or attempts > settings.retries:
            break
        log.warning("rollout of %s: %s before the policy acted (%s); running it again", task.id, rec.termination,
                    rec.error)
    error = outcome == "infra_error" or not session.completion_ids
    if raw is None and not error and rec.termination not in ("submitted", "answered"):
        raw = _score(task, rec, scorer)  # a policy fault's answer, scored for the log only
    reward = (raw or 0.0) if outcome in ("submitted", "wrong") else settings.overlong_reward
    sample = session.sample()
    if error:  # nothing to learn from: no token of it in the loss
        if not sample["completion_ids"]:
            eos = policy.tokenizer.eos_token_id
            sample.update(completion_ids=[eos], logprobs=[0.0], env_mask=[0])
            sample["prompt_ids"] = sample["prompt_ids"] or [eos]
        sample["env_mask"] = [0] * len(sample["completion_ids"])
        reward = 0.0
        outcome = "infra_error"
    calls = sum(len(s.calls) for s in rec.steps)
    stats = {"turns": rec.turns, "tool_calls": calls, "termination": rec.termination, "outcome": outcome,
             "fault": fault, **episode_faults(rec),
             "sampled_tokens": sum(sample["env_mask"]), "episode_tokens": len(sample["completion_ids"]),
             "drift_turns": session.drift_turns, "isolated_renders": session.isolated_renders,
             "env_s": rec.env_s, "llm_s": rec.llm_s, "wall_s": rec.wall_s, "attempts": attempts,
             "sandbox_start_s": rec.sandbox_start_s, "acquire_wait_s": rec.acquire_wait_s,
             "wall_clock_limited": int(wall_clock_limited(rec)), "concurrent_output": int(concurrent_output(rec)),
             "unordered_output": int(unordered_output(rec)), "tokens_sha256": tokens_sha256(sample)}
    return Rollout(task, rec, sample, float(reward), raw, error, outcome, fault, session.drift_turns > 0, attempts,
                   stats)


def tokens_sha256(sample: dict[str, Any]) -> str:
    """A short hash of what the episode is to training: its prompt ids, completion ids (sampled and the
    environment's: the observations) and mask. Two runs' steps pair episode by episode on it."""
    import hashlib
    import json

    blob = json.dumps([sample["prompt_ids"], sample["completion_ids"], sample["env_mask"]], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _score(task: Task, rec: Trajectory, scorer=None) -> float | None:
    """The evaluation's score of the episode's answer (recorded on ``rec``); None when no scorer knows the task."""
    try:
        s = (scorer or score)(task, rec.answer, mode=rec.mode)
    except Exception as e:  # noqa: BLE001 - a task no scorer knows: no learning signal, kept out of the loss
        log.warning("rollout of %s could not be scored: %s", task.id, e)
        return None
    rec.reward, rec.score = s.value, {"scorer": s.scorer, "extracted": s.extracted}
    return s.value


def run_group(tasks: list[Task], policy: Any, agent_cfg, settings: RolloutSettings, *, pool=None,
              seeds: list[int] | None = None, workers: int | None = None) -> list[Rollout]:
    """Every task's episode at the same time (one thread each; the policy's engine batches their turns, the
    pool bounds the sandboxes); results in the order of ``tasks``.

    ``settings.deterministic``: the same seeds give the same episodes, token for token: episode i runs on
    slot i mod slots and the policy decodes in rounds of every live slot's turn (``LocalHFModel.lockstep``);
    no more slots than the pool's sandboxes, or a slot waiting for a sandbox would stop the rounds."""
    seeds = seeds or list(range(len(tasks)))
    if settings.deterministic and tasks:
        return _run_lockstep(tasks, policy, agent_cfg, settings, pool=pool, seeds=seeds, workers=workers)
    with ThreadPoolExecutor(max_workers=workers or max(1, len(tasks)), thread_name_prefix="lis-rollout") as ex:
        futures = [ex.submit(run_episode, t, policy, agent_cfg, settings, pool=pool, seed=s)
                   for t, s in zip(tasks, seeds)]
        return [f.result() for f in futures]


def lockstep_slots(episodes: int, workers: int | None = None, pool=None) -> int:
    """How many slots a deterministic group of ``episodes`` runs on (see :func:`run_group`)."""
    n = max(1, episodes)
    if workers:
        n = min(n, int(workers))
    cap = getattr(pool, "max_concurrent", None)
    return max(1, min(n, int(cap))) if cap else n


def _run_lockstep(tasks: list[Task], policy: Any, agent_cfg, settings: RolloutSettings, *, pool, seeds: list[int],
                  workers: int | None) -> list[Rollout]:
    slots = lockstep_slots(len(tasks), workers, pool)
    out: list[Rollout | None] = [None] * len(tasks)
    with policy.lockstep(slots) as step:
        def run_slot(s: int) -> None:
            with step.slot(s):
                for i in range(s, len(tasks), slots):
                    out[i] = run_episode(tasks[i], policy, agent_cfg, settings, pool=pool, seed=seeds[i])

        with ThreadPoolExecutor(max_workers=slots, thread_name_prefix="lis-rollout") as ex:
            for f in [ex.submit(run_slot, s) for s in range(slots)]:
                f.result()
        log.debug("lockstep group: %d episodes on %d slots, %s", len(tasks), slots, step.round_stats)
    return out  # type: ignore[return-value]

"""GRPO in the sandbox with TRL's GRPOTrainer: our agent loop as the rollout, token-exact, concurrent.

    train_grpo(init_dir, tasks, out_dir, settings, agent_cfg=..., pool=..., mode="sandbox",
               ckpt_dir=..., log_path=...)

TRL's ``rollout_func`` hook gets each generation batch's prompts (every prompt repeated
``samples_per_prompt`` times); we run all of those episodes at once (:func:`run_group`: our
loop, tools, prompts, answer file and scorer, in real sandboxes, each turn batched across the
episodes by the policy's engine) and hand TRL, per episode, the prompt ids, the completion ids
(sampled + environment), the sampled log-probs and the environment mask. TRL's own tool loop
(which executes tools one rollout after another) is not used. One generation batch makes one
optimizer step (on-policy, as the paper). Checkpoints every ``save_every`` steps go to
``ckpt_dir`` (outside the stage's outputs); a re-run resumes from the last one.
"""
from __future__ import annotations

import json
import logging
import math
import time
from pathlib import Path
from typing import Any

from lis.train.grpo.settings import GRPOSettings

log = logging.getLogger("lis.train.grpo")


def prompt_key(messages: list[dict[str, Any]]) -> str:
    return json.dumps([(m.get("role"), m.get("content")) for m in messages], ensure_ascii=False)


def last_checkpoint(ckpt_dir: Path) -> str | None:
    found = sorted((p for p in Path(ckpt_dir).glob("checkpoint-*") if (p / "trainer_state.json").is_file()),
                   key=lambda p: int(p.name.split("-")[-1]))
    return str(found[-1]) if found else None


class StepLog:
    """Per-step training metrics: a JSON line each (and the summary the stage publishes)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, row: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")

    def rows(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        out = {}
        for line in self.path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            out[row["step"]] = row  # a resumed run rewrites the steps after its checkpoint
        return [out[k] for k in sorted(out)]


def group_stats(rollouts: list, samples_per_prompt: int) -> dict[str, Any]:
    """What a step's rollouts did: rewards, solve rates per group, turns, tool calls, tokens, drift,
    errors, masked fraction."""
    n = len(rollouts)
    rewards = [r.reward for r in rollouts]
    groups = [rewards[i:i + samples_per_prompt] for i in range(0, n, samples_per_prompt)]
    tokens = sum(r.stats["episode_tokens"] for r in rollouts)
    sampled = sum(r.stats["sampled_tokens"] for r in rollouts)
    mean = sum(rewards) / n if n else 0.0
    return {
        "reward_mean": round(mean, 4),
        "reward_std": round(math.sqrt(sum((x - mean) ** 2 for x in rewards) / n), 4) if n else 0.0,
        "raw_reward_mean": round(sum((r.raw_reward or 0.0) for r in rollouts) / n, 4) if n else 0.0,
        "solve_all": sum(1 for g in groups if g and min(g) >= 1.0) / max(1, len(groups)),
        "solve_none": sum(1 for g in groups if g and max(g) <= 0.0) / max(1, len(groups)),
        "groups_with_variance": sum(1 for g in groups if g and max(g) > min(g)) / max(1, len(groups)),
        "turns_mean": round(sum(r.stats["turns"] for r in rollouts) / n, 3) if n else 0.0,
        "tool_calls_mean": round(sum(r.stats["tool_calls"] for r in rollouts) / n, 3) if n else 0.0,
        "episode_tokens_mean": round(tokens / n, 1) if n else 0.0,
        "masked_fraction": round(1 - sampled / tokens, 4) if tokens else 0.0,
        "drift_episodes": sum(1 for r in rollouts if r.drift),
        "errors": sum(1 for r in rollouts if r.error),
        "overlong": sum(1 for r in rollouts if r.stats["termination"] in ("max_turns", "token_budget")),
        "submitted": sum(1 for r in rollouts if r.stats["termination"] == "submitted"),
    }


def train_grpo(init_dir: str | Path, tasks: list, out_dir: str | Path, settings: GRPOSettings, *, agent_cfg,
               pool, mode: str, ckpt_dir: str | Path, log_path: str | Path, progress: bool = False) -> dict[str, Any]:
    """Train the model in ``init_dir`` on ``tasks`` and write it to ``out_dir``; return a summary."""
    import dataclasses

    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from lis.models.base import Sampling
    from lis.models.local_hf import LocalHFModel
    from lis.prompts import render_prompts
    from lis.train.rollout.group import RolloutSettings, run_group

    s = settings
    init, out, ckpt = Path(init_dir), Path(out_dir), Path(ckpt_dir)
    if s.threads:
        torch.set_num_threads(s.threads)
    tokenizer = AutoTokenizer.from_pretrained(init)
    by_prompt = {}
    rows = []
    from lis.train.rollout.group import task_mode

    for t in tasks:
        msgs = render_prompts(t, task_mode(t, mode))
        by_prompt[prompt_key(msgs)] = t
        rows.append({"prompt": msgs, "task_id": t.id})
    dataset = Dataset.from_list(rows)
    steplog = StepLog(log_path)
    rsettings = RolloutSettings(mode=mode, max_prompt_tokens=s.max_prompt_tokens,
                                max_episode_tokens=s.max_episode_tokens, overlong_reward=s.overlong_reward,
                                retries=s.retries,
                                sampling=Sampling(temperature=s.temperature, top_p=s.top_p, top_k=s.top_k,
                                                  max_tokens=s.max_tokens_per_turn, seed=s.seed))
    cfg = dataclasses.replace(agent_cfg, max_turns=s.max_turns, max_context_tokens=s.max_prompt_tokens +
                              s.max_episode_tokens)
    state: dict[str, Any] = {"policy": None, "t_last": time.monotonic()}

    def rollout_func(prompts: list, trainer) -> dict[str, list]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        if state["policy"] is None or state["policy"].model is not model:
            state["policy"] = LocalHFModel(model, tokenizer, name="policy", seed=s.seed)
        step = trainer.state.global_step
        tasks_now = [by_prompt[prompt_key(p)] for p in prompts]
        seeds = [(s.seed * 1_000_003 + step * 10_007 + i) % (2 ** 31) for i in range(len(prompts))]
        was_training = model.training
        model.eval()
        t0 = time.monotonic()
        try:
            rollouts = run_group(tasks_now, state["policy"], cfg, rsettings, pool=pool, seeds=seeds)
        finally:
            if was_training:
                model.train()
        t_roll = time.monotonic() - t0
        stats = group_stats(rollouts, s.samples_per_prompt)
        longest = max((r.stats["wall_s"] for r in rollouts), default=0.0)
        row = {"step": step + 1, **stats, "rollout_s": round(t_roll, 2), "longest_episode_s": round(longest, 2),
               "episodes": len(rollouts), "time": time.time()}
        state["pending"] = row
        metrics = trainer._metrics["train"]  # TRL's per-step metric lists (averaged into its logs)
        for k in ("turns_mean", "tool_calls_mean", "episode_tokens_mean", "masked_fraction", "drift_episodes",
                  "errors", "solve_all", "solve_none", "raw_reward_mean"):
            metrics[f"rollout/{k}"].append(float(stats[k]))
        return {"prompt_ids": [r.sample["prompt_ids"] for r in rollouts],
                "completion_ids": [r.sample["completion_ids"] for r in rollouts],
                "logprobs": [r.sample["logprobs"] for r in rollouts],
                "env_mask": [r.sample["env_mask"] for r in rollouts],
                "env_reward": [r.reward for r in rollouts]}

    def sandbox_reward(prompts, completions, env_reward, **kwargs) -> list[float]:
        return [float(x) for x in env_reward]

    class _Log(TrainerCallback):
        def on_log(self, args, tstate, control, logs=None, **kwargs):
            row = state.pop("pending", None)
            if row is None or not logs or "loss" not in logs:
                if row is not None:
                    state["pending"] = row
                return
            row.update({"loss": logs.get("loss"), "grad_norm": logs.get("grad_norm"),
                        "learning_rate": logs.get("learning_rate"),
                        "step_s": round(time.monotonic() - state["t_last"], 2)})
            state["t_last"] = time.monotonic()
            steplog.write(row)
            log.info("step %d/%d: reward %.3f (std %.3f, groups with variance %.0f%%), turns %.1f, tool calls %.1f, "
                     "episode tokens %.0f, drift %d, errors %d, %.1fs", row["step"], s.steps, row["reward_mean"],
                     row["reward_std"], 100 * row["groups_with_variance"], row["turns_mean"], row["tool_calls_mean"],
                     row["episode_tokens_mean"], row["drift_episodes"], row["errors"], row["step_s"])

    accumulate = s.group_batch // s.micro_batch
    args = GRPOConfig(
        output_dir=str(ckpt), max_steps=s.steps, per_device_train_batch_size=s.micro_batch,
        gradient_accumulation_steps=accumulate, num_generations=s.samples_per_prompt,
        learning_rate=s.lr, lr_scheduler_type=s.lr_scheduler, warmup_steps=0, weight_decay=s.weight_decay,
        max_grad_norm=s.max_grad_norm, epsilon=s.clip_low, epsilon_high=s.clip_high, beta=s.beta,
        scale_rewards=s.scale_rewards, loss_type=s.loss_type, num_iterations=1, temperature=s.temperature,
        top_p=s.top_p, top_k=s.top_k or 0, max_completion_length=s.max_episode_tokens, mask_truncated_completions=False,
        logging_steps=1, save_strategy="steps", save_steps=s.save_every, save_total_limit=2, seed=s.seed,
        data_seed=s.seed, use_cpu=not torch.cuda.is_available(), bf16=False, gradient_checkpointing=False,
        report_to="none", disable_tqdm=not progress, log_completions=False, shuffle_dataset=True,
        remove_unused_columns=False, dataloader_num_workers=0)
    trainer = GRPOTrainer(model=str(init), reward_funcs=[sandbox_reward], args=args, train_dataset=dataset,
                          processing_class=tokenizer, rollout_func=rollout_func, callbacks=[_Log()])
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # our step log says it in one line (TRL would print every dict)
    resume = last_checkpoint(ckpt)
    if resume:
        log.info("resuming GRPO from %s", resume)
    t0 = time.monotonic()
    trainer.train(resume_from_checkpoint=resume)
    wall = time.monotonic() - t0
    trainer.save_model(str(out))
    tokenizer.save_pretrained(str(out))
    rows = steplog.rows()
    return {"steps": len(rows), "resumed_from": resume, "wall_s": round(wall, 2),
            "first": rows[0] if rows else None, "last": rows[-1] if rows else None}

"""GRPO in the sandbox with TRL's GRPOTrainer: our agent loop as the rollout, token-exact, concurrent.

    train_grpo(init_dir, tasks, out_dir, settings, agent_cfg=..., pool=..., mode="sandbox",
               ckpt_dir=..., log_path=...)

TRL's ``rollout_func`` gets each generation batch's prompts (each repeated ``samples_per_prompt``
times); we run all those episodes at once (:func:`run_group`: our loop, tools, prompts and scorer in
real sandboxes, turns batched by the policy's engine) and hand TRL per episode the prompt ids, the
completion ids (sampled + environment), the sampled log-probs and the environment mask. TRL's own tool
loop (one rollout after another) is not used. One generation batch makes one optimizer step
(on-policy). Checkpoints go to ``ckpt_dir`` (outside the stage's outputs); a re-run resumes from the last.

Under ``accelerate launch --num_processes N`` each rank runs its share of the batch in its own sandbox
pool, seeded by the episodes' global index; the step's statistics are gathered from every rank and
rank 0 alone writes the step log and the model.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lis.errors import LisError
from lis.models.base import Sampling
from lis.models.local_hf import LocalHFModel
from lis.prompts import render_prompts
from lis.config.training import GrpoSection
from lis.train.grpo.settings import rl_sampling, rollout_settings, trl_sampling
from lis.train.grpo.vllm_server import ServerMode
from lis.train.disk import require_model_room
from lis.train.lora import generation_model, lora_config, merged_model
from lis.train.precision import resolve_precision
from lis.train.rollout.budget import within_prompt_budget
from lis.train.rollout.group import run_group, task_mode
from lis.train.rollout.outcome import OUTCOMES
from lis.util import progress as where_at
from lis.util.jsonl import append_jsonl, read_jsonl
from lis.util.stats import percentiles

log = logging.getLogger("lis.train.grpo")

IN_EPISODE_FAULTS = ("command_timeouts", "malformed_calls", "turns_cut", "oom_commands")  # counted per step


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
        append_jsonl(self.path, row)

    def rows(self) -> list[dict[str, Any]]:
        out = {}
        # tolerant: a run killed mid-write leaves a torn last line
        for row in read_jsonl(self.path, mode="tolerant", missing_ok=True):
            out[row["step"]] = row  # a resumed run rewrites the steps after its checkpoint
        return [out[k] for k in sorted(out)]


def world() -> tuple[int, int]:
    """(rank, world size) of this process as ``accelerate launch``/torchrun set them (0, 1 alone)."""
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def episode_facts(rollouts: list, rank: int, tasks: list, seeds: list[int]) -> list[dict[str, Any]]:
    """What the step statistics need of each episode (small, picklable: gathered across ranks)."""
    keys = ("episode_tokens", "sampled_tokens", "turns", "tool_calls", "termination", "wall_s", "outcome", "fault",
            "command_timeouts", "malformed_calls", "turns_cut", "oom_commands", "attempts", "sandbox_start_s",
            "acquire_wait_s", "wall_clock_limited", "concurrent_output", "unordered_output", "tokens_sha256")
    return [{"reward": r.reward, "raw_reward": r.raw_reward, "drift": r.drift, "error": r.error, "rank": rank,
             "episode": (t.id, seed), "stats": {k: r.stats[k] for k in keys}}
            for r, t, seed in zip(rollouts, tasks, seeds)]


def group_stats(rollouts: list, samples_per_prompt: int) -> dict[str, Any]:
    """What a step's rollouts did: rewards, solve rates, outcomes and faults, turns, tokens, drift. Reward
    statistics leave infrastructure errors out (as training does) and count a policy fault's reward."""
    n = len(rollouts)
    rewards = [None if r.error else r.reward for r in rollouts]
    groups = [[x for x in rewards[i:i + samples_per_prompt] if x is not None] for i in range(0, n, samples_per_prompt)]
    scored = [x for x in rewards if x is not None]
    raw = [r.raw_reward or 0.0 for r in rollouts if not r.error]
    tokens = sum(r.stats["episode_tokens"] for r in rollouts)
    sampled = sum(r.stats["sampled_tokens"] for r in rollouts)
    k = len(scored)
    mean = sum(scored) / k if k else 0.0
    outcomes = {o: sum(1 for r in rollouts if _outcome(r) == o) for o in OUTCOMES}
    faults = Counter(r.stats["fault"] for r in rollouts if r.stats.get("fault"))
    return {
        "reward_mean": round(mean, 4),
        "reward_std": round(math.sqrt(sum((x - mean) ** 2 for x in scored) / k), 4) if k else 0.0,
        "raw_reward_mean": round(sum(raw) / k, 4) if k else 0.0,
        "solve_all": sum(1 for g in groups if g and min(g) >= 1.0) / max(1, len(groups)),
        "solve_none": sum(1 for g in groups if g and max(g) <= 0.0) / max(1, len(groups)),
        "groups_with_variance": sum(1 for g in groups if g and max(g) > min(g)) / max(1, len(groups)),
        "turns_mean": round(sum(r.stats["turns"] for r in rollouts) / n, 3) if n else 0.0,
        "tool_calls_mean": round(sum(r.stats["tool_calls"] for r in rollouts) / n, 3) if n else 0.0,
        "episode_tokens_mean": round(tokens / n, 1) if n else 0.0,
        "masked_fraction": round(1 - sampled / tokens, 4) if tokens else 0.0,
        "drift_episodes": sum(1 for r in rollouts if r.drift),
        "errors": outcomes["infra_error"],
        "overlong": sum(1 for r in rollouts if r.stats.get("fault") in ("turn_budget", "token_budget")),
        **{f"{o}_rate": round(outcomes[o] / n, 4) if n else 0.0 for o in OUTCOMES},
        "outcomes": outcomes, "faults": dict(sorted(faults.items())),
        **{k: sum(r.stats.get(k, 0) for r in rollouts) for k in IN_EPISODE_FAULTS},
        "retried_episodes": sum(1 for r in rollouts if r.stats.get("attempts", 1) > 1),
        "wall_clock_limited": sum(r.stats.get("wall_clock_limited", 0) for r in rollouts),
        "concurrent_output": sum(r.stats.get("concurrent_output", 0) for r in rollouts),
        "unordered_output": sum(r.stats.get("unordered_output", 0) for r in rollouts),
        "sandboxes": _sandbox_stats(rollouts),
    }


def _sandbox_stats(rollouts: list) -> dict[str, Any] | None:
    """p50 / p99 of the step's sandbox starts and of its episodes' waits for a sandbox."""
    boxed = [r.stats for r in rollouts if r.stats.get("sandbox_start_s") or r.stats.get("acquire_wait_s")]
    if not boxed:
        return None
    return {"start_s": percentiles([b.get("sandbox_start_s") or 0.0 for b in boxed]),
            "acquire_wait_s": percentiles([b.get("acquire_wait_s") or 0.0 for b in boxed])}


def _mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 6) if xs else None


def _outcome(r) -> str:
    return r.stats.get("outcome") or ("infra_error" if r.error else "submitted")


def rollout_output(rollouts: list) -> dict[str, list]:
    """What ``rollout_func`` hands TRL: per episode the ids, the sampling log-probs, the environment mask
    (1 = sampled, trained on), and the reward and error flag that :func:`sandbox_reward` reads."""
    return {"prompt_ids": [r.sample["prompt_ids"] for r in rollouts],
            "completion_ids": [r.sample["completion_ids"] for r in rollouts],
            "logprobs": [r.sample["logprobs"] for r in rollouts],
            "env_mask": [r.sample["env_mask"] for r in rollouts],
            "env_reward": [r.reward for r in rollouts], "env_error": [r.error for r in rollouts]}


def sandbox_reward(prompts, completions, env_reward, env_error, **kwargs) -> list[float | None]:
    """The reward function TRL calls: the episode's reward, None for an errored episode, which keeps it out
    of its group's baseline (advantage 0): an infrastructure error says nothing about the policy, and as
    reward 0 it would shift the advantages of the group's other episodes."""
    return [None if err else float(x) for x, err in zip(env_reward, env_error)]


def grpo_config(s: GrpoSection, ckpt: Path, *, n_proc: int = 1, precision=None, lora: bool = False, server=None,
                progress: bool = False):
    """TRL's GRPOConfig of the settings; in vLLM server mode TRL's own importance-sampling correction is off
    (``grpo.importance_sampling`` is the one correction)."""
    import torch
    from trl import GRPOConfig

    precision = precision or resolve_precision(s.precision.bf16, s.precision.gradient_checkpointing)
    accumulate = s.group_batch // (s.micro_batch * n_proc)  # the global batch: micro × processes × accumulation
    init_kwargs = {"dtype": "bfloat16"} if lora and precision.bf16 else None  # LoRA: the frozen base in bf16
    return GRPOConfig(
        output_dir=str(ckpt), max_steps=s.steps, per_device_train_batch_size=s.micro_batch,
        gradient_accumulation_steps=accumulate, num_generations=s.samples_per_prompt,
        learning_rate=s.lr, lr_scheduler_type=s.lr_scheduler, warmup_steps=0, weight_decay=s.weight_decay,
        max_grad_norm=s.max_grad_norm, epsilon=s.clip_low, epsilon_high=s.clip_high, beta=s.beta,
        scale_rewards=s.scale_rewards, loss_type="dr_grpo",  # unused: CheckedGRPOTrainer computes lis.train.grpo.loss
        num_iterations=1, **trl_sampling(s),
        max_completion_length=s.max_episode_tokens, mask_truncated_completions=False,
        logging_steps=1, save_strategy="steps", save_steps=s.save_every, save_total_limit=s.checkpoints.keep,
        save_only_model=not s.checkpoints.optimizer, seed=s.seed, data_seed=s.seed,
        use_cpu=not torch.cuda.is_available(), bf16=precision.bf16,
        gradient_checkpointing=precision.gradient_checkpointing,
        gradient_checkpointing_kwargs={"use_reentrant": False}, model_init_kwargs=init_kwargs,
        report_to="none", disable_tqdm=not progress, log_completions=False, shuffle_dataset=True,
        remove_unused_columns=False, dataloader_num_workers=0,
        **({**server.trl_config(), "vllm_importance_sampling_correction": False} if server else {}))


@contextlib.contextmanager
def _full_model(trainer):
    import torch
    from trl.models import unwrap_model_for_generation

    dist = getattr(trainer, "_dist", None)  # TRL's backend helper: FSDP v1 materialisation (no-op otherwise)
    with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator,
                                     gather_deepspeed3_params=trainer.args.ds3_gather_for_generation) as model, \
            torch.no_grad(), \
            (dist.summon_full_params(trainer.model_wrapped, recurse=False) if dist else contextlib.nullcontext()):
        yield generation_model(model)


def train_grpo(init_dir: str | Path, tasks: list, out_dir: str | Path, settings: GrpoSection, *, agent_cfg,
               pool, mode: str, ckpt_dir: str | Path, log_path: str | Path, progress: bool = False,
               engine_wrapper: Any = None) -> dict[str, Any]:
    """Train the model in ``init_dir`` on ``tasks`` and write it to ``out_dir``; return a summary. Tasks over
    the prompt budget are dropped first (``prompts_dropped``; LisError when none is left).
    ``engine_wrapper(engine, policy)``: an engine in front of the policy's (the rehearsal's scripted turns)."""
    import dataclasses

    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback

    # lazy: loads trl, peft, transformers, torch; importing this module does not
    from lis.train.grpo.checked_trainer import CheckedGRPOTrainer

    s = settings
    init, out, ckpt = Path(init_dir), Path(out_dir), Path(ckpt_dir)
    _, n_proc = world()
    if s.group_batch % (s.micro_batch * n_proc):
        raise LisError(f"grpo: {s.group_batch} episodes per step (prompts_per_step × samples_per_prompt) do not "
                       f"split into {n_proc} processes × micro_batch {s.micro_batch}",
                       "make prompts_per_step × samples_per_prompt a multiple of num_processes × micro_batch")
    if s.threads:
        torch.set_num_threads(s.threads)
    tokenizer = AutoTokenizer.from_pretrained(init)
    tasks, dropped = within_prompt_budget(tasks, tokenizer, mode, agent_cfg, s.max_prompt_tokens)
    if dropped:
        log.warning("%d of %d training tasks have a %s-mode prompt over grpo.max_prompt_tokens %d (longest %d): "
                    "dropped before training", len(dropped), len(dropped) + len(tasks), mode, s.max_prompt_tokens,
                    max(d["prompt_tokens"] for d in dropped))
    if not tasks:
        raise LisError(f"every training task's prompt is over grpo.max_prompt_tokens {s.max_prompt_tokens} in {mode} "
                       "mode", "raise grpo.max_prompt_tokens or use shorter tasks")
    by_prompt = {}
    rows = []
    for t in tasks:
        msgs = render_prompts(t, task_mode(t, mode))
        by_prompt[prompt_key(msgs)] = t
        rows.append({"prompt": msgs, "task_id": t.id})
    dataset = Dataset.from_list(rows)
    steplog = StepLog(log_path)
    rsettings = rollout_settings(s, mode)
    # one sampling policy: the sessions' (rl_sampling), the agent loop's per-call settings the same (a
    # call's settings override the session's), the policy model's own (no generation_config fallback)
    policy_sampling = rl_sampling(s)
    cfg = dataclasses.replace(agent_cfg, max_turns=s.max_turns, max_context_tokens=s.max_prompt_tokens +
                              s.max_episode_tokens, sampling=Sampling(**{**policy_sampling.__dict__,
                                                                         "max_tokens": None}))
    state: dict[str, Any] = {"policy": None, "t_last": time.monotonic()}
    precision = resolve_precision(s.precision.bf16, s.precision.gradient_checkpointing)
    peft_config = lora_config(s.lora)
    engine_kw = s.engine.model_dump()
    server = ServerMode.from_settings(s.vllm)
    if server is not None:
        server.require_vllm()
        if rsettings.deterministic:
            raise LisError("grpo.rollout.deterministic needs the policy to generate in the training process; "
                           "grpo.vllm.mode is 'server'",
                           "set grpo.vllm.mode: none, or grpo.rollout.deterministic: false")

    def _wrap(policy) -> None:
        if engine_wrapper is not None:
            policy.wrap_engine(lambda inner: engine_wrapper(inner, policy))

    def _local_rollouts(trainer, tasks_now: list, seeds: list[int]) -> list:
        # the whole model on this rank while its episodes generate: DDP unwrapped; DeepSpeed ZeRO-3 and
        # FSDP (v1) parameters gathered, as TRL's own generation does
        with _full_model(trainer) as model:
            was_training = model.training
            if state["policy"] is None or state["policy"].model is not model:
                state["policy"] = LocalHFModel(model, tokenizer, name="policy", seed=s.seed, sampling=policy_sampling,
                                               **engine_kw)
                _wrap(state["policy"])
            else:
                state["policy"].weights_changed()  # the kept turns' caches are the previous step's weights
            model.eval()
            try:
                return run_group(tasks_now, state["policy"], cfg, rsettings, pool=pool, seeds=seeds)
            finally:
                if was_training:
                    model.train()

    def rollout_func(prompts: list, trainer) -> dict[str, list]:
        step = trainer.state.global_step
        tasks_now = [by_prompt[prompt_key(p)] for p in prompts]
        # each rank holds its slice of the generation batch: seeds by the episode's global index
        first = trainer.accelerator.process_index * len(prompts)
        seeds = [(s.seed * 1_000_003 + step * 10_007 + first + i) % (2 ** 31) for i in range(len(prompts))]
        t0 = time.monotonic()
        if server is not None:  # TRL pushed this step's weights to the server before calling us (sync: trl)
            model = trainer.accelerator.unwrap_model(trainer.model)
            if server.sync == "files" and state.get("pushed") != step:  # lis pushes them (a file, the server reloads)
                weights = server.gathered_weights(trainer.accelerator, trainer.model)   # every rank: a collective
                if trainer.accelerator.is_main_process:
                    server.push_weights(model, ckpt / "served-weights", weights=weights)
                trainer.accelerator.wait_for_everyone()
                state["pushed"] = step
            if state["policy"] is None:
                state["policy"] = server.policy(generation_model(model), tokenizer, s.seed, sampling=policy_sampling)
                _wrap(state["policy"])
            rollouts = run_group(tasks_now, state["policy"], cfg, rsettings, pool=pool, seeds=seeds)
        else:
            rollouts = _local_rollouts(trainer, tasks_now, seeds)
        t_roll = time.monotonic() - t0
        # the step's normalisers of the loss (lis.train.grpo.loss): this rank's episodes and trained tokens
        trainer.step_norms = {"sequences": len(rollouts), "tokens": sum(sum(r.sample["env_mask"]) for r in rollouts)}
        if "sampling" not in state:  # what the engine drew with (the policy's resolution of the sessions' settings)
            used = state["policy"].resolve_sampling(rsettings.sampling.override(cfg.sampling))
            state["sampling"] = {k: getattr(used, k) for k in ("temperature", "top_p", "top_k", "repetition_penalty")}
        facts = episode_facts(rollouts, trainer.accelerator.process_index, tasks_now, seeds)
        if n_proc > 1:
            from accelerate.utils import gather_object

            log.info("step %d: rank %d of %d ran %d episodes (%.1f s)", step + 1, trainer.accelerator.process_index,
                     n_proc, len(rollouts), t_roll)
            facts = gather_object(facts)  # every rank's episodes, in rank order (TRL's order of the batch)
        every = [SimpleNamespace(**f) for f in facts]
        stats = group_stats(every, s.samples_per_prompt)
        longest = max((r.stats["wall_s"] for r in every), default=0.0)
        by_rank = [sum(1 for f in facts if f["rank"] == k) for k in range(n_proc)]
        groups = [f["episode"][0] for f in facts[::s.samples_per_prompt]]  # the step's prompts, in order
        rewards = [None if f["error"] else f["reward"] for f in facts]  # TRL's batch order
        per_episode = {"episode_rewards": rewards,
                       "group_rewards": [_mean([r for r in rewards[i:i + s.samples_per_prompt] if r is not None])
                                         for i in range(0, len(rewards), s.samples_per_prompt)],
                       "episode_trained_tokens": [f["stats"]["sampled_tokens"] for f in facts]}
        joined = "".join(f["stats"]["tokens_sha256"] for f in facts)
        per_episode["episodes_sha256"] = hashlib.sha256(joined.encode()).hexdigest()[:16]  # the step's episodes, in order
        row = {"step": step + 1, **stats, "task_ids": groups, **per_episode, "rollout_s": round(t_roll, 2),
               "longest_episode_s": round(longest, 2),
               "episodes": len(every), "episodes_by_rank": by_rank, "world_size": n_proc,
               "duplicate_episodes": len(facts) - len({tuple(f["episode"]) for f in facts}), "time": time.time()}
        state["pending"] = row
        metrics = trainer._metrics["train"]  # TRL's per-step metric lists (averaged into its logs)
        for k in ("turns_mean", "tool_calls_mean", "episode_tokens_mean", "masked_fraction", "drift_episodes",
                  "errors", "solve_all", "solve_none", "raw_reward_mean", "policy_fault_rate", "infra_error_rate"):
            metrics[f"rollout/{k}"].append(float(stats[k]))
        return rollout_output(rollouts)

    class _Log(TrainerCallback):
        def on_step_end(self, args, tstate, control, **kwargs):
            where_at.at(f"GRPO step {tstate.global_step}/{s.steps}")
            checks = trainer.checks.take(trainer.accelerator)  # every rank: a collective
            if state.get("pending") is not None:
                state["pending"].update(checks)

        def on_log(self, args, tstate, control, logs=None, **kwargs):
            if not tstate.is_world_process_zero:  # rank 0 alone writes the step log
                return
            row = state.get("pending")
            if row is None or not logs or "loss" not in logs:
                return
            del state["pending"]
            row.update({"loss": logs.get("loss"), "grad_norm": logs.get("grad_norm"),
                        "learning_rate": logs.get("learning_rate"),
                        "step_s": round(time.monotonic() - state["t_last"], 2)})
            state["t_last"] = time.monotonic()
            steplog.write(row)
            log.info("step %d/%d: reward %.3f (std %.3f, groups with variance %.0f%%), turns %.1f, tool calls %.1f, "
                     "episode tokens %.0f, outcomes %s, faults %s, drift %d, IS ratio %s..%s, loss %.4g, %.1fs",
                     row["step"], s.steps, row["reward_mean"], row["reward_std"], 100 * row["groups_with_variance"],
                     row["turns_mean"], row["tool_calls_mean"], row["episode_tokens_mean"], row["outcomes"],
                     row["faults"], row["drift_episodes"], row.get("is_ratio_min"), row.get("is_ratio_max"),
                     row.get("loss_value") or 0.0, row["step_s"])
            if row.get("loss_calls_eval_mode"):
                log.warning("step %d: %d of %d loss computations ran in eval mode (weighted wrongly by TRL)",
                            row["step"], row["loss_calls_eval_mode"], row["loss_calls"])

    args = grpo_config(s, ckpt, n_proc=n_proc, precision=precision, lora=peft_config is not None, server=server,
                       progress=progress)
    trainer = CheckedGRPOTrainer(model=str(init), reward_funcs=[sandbox_reward], args=args, train_dataset=dataset,
                                 processing_class=tokenizer, rollout_func=rollout_func, callbacks=[_Log()],
                                 peft_config=peft_config)
    trainer.loss_settings = s
    trainer.checkpoint_policy = s.checkpoints.model_dump()
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # our step log says it in one line (TRL would print every dict)
    resume = last_checkpoint(ckpt)
    if resume:
        log.info("resuming GRPO from %s", resume)
    acc = trainer.accelerator
    log.info("GRPO: rank %d of %d (world size %d, %s): %d of the %d episodes of each step, %d per backward, "
             "%d accumulation steps", acc.process_index, acc.num_processes, acc.num_processes, acc.distributed_type,
             s.group_batch // acc.num_processes, s.group_batch, s.micro_batch, args.gradient_accumulation_steps)
    t0 = time.monotonic()
    trainer.train(resume_from_checkpoint=resume)
    wall = time.monotonic() - t0
    require_model_room(out, acc.unwrap_model(trainer.model), "grpo")
    if peft_config is not None:  # the adapters merged into the base: a plain model for evaluation and serving
        if acc.is_main_process:
            merged_model(acc.unwrap_model(trainer.model)).save_pretrained(str(out))
    else:
        trainer.save_model(str(out))  # every rank takes part (sharded states are gathered); rank 0 writes
    if acc.is_main_process:
        tokenizer.save_pretrained(str(out))
    acc.wait_for_everyone()
    rows = steplog.rows() if acc.is_main_process else []
    return {"steps": len(rows), "resumed_from": resume, "wall_s": round(wall, 2), "rank": acc.process_index,
            "sampling": {"engine": state.get("sampling"), "trl": trl_sampling(s)},
            "world_size": acc.num_processes, "main": acc.is_main_process, "prompts_dropped": len(dropped),
            "prompts_dropped_ids": [d["id"] for d in dropped][:100], "tasks": len(tasks),
            "precision": dataclasses.asdict(precision), "lora_rank": s.lora.rank,
            "first": rows[0] if rows else None, "last": rows[-1] if rows else None}

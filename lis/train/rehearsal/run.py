"""Rehearse the ``full`` profile's training on a random-init Qwen3, before anyone rents a GPU.

    report = rehearse(load(root, profile="full"), out_dir)      # lis train rehearse (lis bench all runs it)
    report["ok"], report["checks"]

The real code runs at the ``full`` profile's settings (GRPO steps of 8 prompts × 8 samples in real
sandboxes, the paper's budgets, loss and learning rate; SFT at the profile's batch and length) on a
random-init Qwen3 (:data:`MODEL_CONFIG`, the tiny tokenizer). GRPO runs as :data:`CONFIGS` says:
in-process with full fine-tuning, and in server mode (lis's ChatServer, ``sync: files``) with LoRA and
``sequence_mask``; SFT with LoRA off and on. To fit a few CPU cores the episodes are short and scripted
(:mod:`lis.train.rehearsal.scripted`) and fp32. Not covered: size and speed (``lis train plan``), CUDA
and bf16 numerics, FSDP/ZeRO, vLLM itself, full-length episodes, real learning.
"""
from __future__ import annotations

import json
import logging
import math
import resource
import shutil
import time
from pathlib import Path
from typing import Any

from lis import layout
from lis.errors import LisError
from lis.models.local_hf import LocalHFModel
from lis.models.server import ChatServer
from lis.prompts import render_prompts
from lis.runtime import agent_config, sandbox_config
from lis.sandbox import registry
from lis.sandbox.image import ensure_image
from lis.sandbox.pool import SandboxPool
from lis.tasks.schema import Task
from lis.config.training import GrpoSection, SftSection
from lis.train.grpo.trainer import StepLog, train_grpo
from lis.train.rehearsal.scripted import ANSWER_CMD, ScriptedTurns
from lis.train.sft.run import train_sft
from lis.offline.base import build_base
from lis.offline.random_model import build_random

log = logging.getLogger("lis.train.rehearsal")

MODEL_CONFIG = f"{layout.MODEL_CONFIGS_DIR}/qwen3-rehearsal.json"
LORA = {"rank": 8, "alpha": 16, "dropout": 0.0, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}
CONFIGS = (
    {"name": "local-full", "server": False, "lora": {"rank": 0}, "is_mode": "none"},
    {"name": "server-lora", "server": True, "lora": LORA, "is_mode": "sequence_mask"},
)


def rehearsal_tasks(n: int = 16) -> list:
    """Document lookups: the population of a town, in a file among filler lines."""
    tasks = []
    for i in range(n):
        value = 1000 + 37 * i
        doc = "\n".join([f"Town: Rehearsalton{i}", "Founded long ago by the river.", f"Population: {value}",
                         "Known for its bridges and its market."])
        tasks.append(Task(id=f"rh{i:02d}", domain="instruct_pretrain",
                          problem_statement=f"What is the population of Rehearsalton{i}? Write the number only.",
                          ground_truth=str(value), input_files={f"rehearsalton{i}.txt": doc}, qa_type="free-form"))
    return tasks


def sft_records(tasks: list, long_tokens: int = 20000) -> list[dict[str, Any]]:
    """Solved sandbox episodes of ``tasks`` (the scripted answer), plus one long vanilla episode whose
    answer has more labelled tokens than one logits chunk (the chunked loss runs)."""
    recs = []
    for t in tasks:
        msgs = render_prompts(t, "sandbox") + [
            {"role": "assistant", "content": None, "tool_calls": [_call("c1", "execute_bash", {"command": ANSWER_CMD})]},
            {"role": "tool", "tool_call_id": "c1", "name": "execute_bash", "content": f"[exit code 0]\n{t.ground_truth}"},
            {"role": "assistant", "content": "Done.", "tool_calls": [_call("c2", "submit", {})]}]
        recs.append({"episode_id": t.id, "task_id": t.id, "mode": "sandbox", "domain": t.domain, "messages": msgs,
                     "teacher": {"success": True}})
    words = max(1, long_tokens // 4)
    recs.append({"episode_id": "long", "task_id": "long", "mode": "vanilla", "domain": "instruct_pretrain",
                 "teacher": {"success": True},
                 "messages": [{"role": "user", "content": "Summarise: " + " ".join(["the river town"] * (words // 3))},
                              {"role": "assistant", "content": " ".join(["a market by the bridge"] * (words // 5))}]})
    return recs


def _call(cid: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


PARTS = ("sft:lora0", "sft:lora8", *(f"grpo:{c['name']}" for c in CONFIGS))  # what --only picks from


def parts(only: str | None) -> tuple[str, ...]:
    """The parts ``--only PART,...`` names, in the rehearsal's order (all of them for None); LisError
    naming an unknown one."""
    if only is None:
        return PARTS
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in PARTS]
    if unknown or not names:
        raise LisError(f"--only {only!r}: unknown part(s) {', '.join(unknown) or '(none named)'}",
                       f"name some of: {', '.join(PARTS)}")
    return tuple(p for p in PARTS if p in names)


def rehearse(params, out: Path, *, backend: str = "auto", steps: int = 2, threads: int = 2,
             image_manifest: dict[str, Any] | None = None, only: tuple[str, ...] = PARTS) -> dict[str, Any]:
    """Run the rehearsal (module doc) of ``params`` (a loaded profile) into ``out`` (replaced); return
    the report. ``only``: the parts run (:data:`PARTS`; the report names them in ``parts``)."""
    import torch

    t0 = time.monotonic()
    root, profile = params.root, params.profile
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    torch.set_num_threads(threads)
    build_base(out / "tokenizer", seed=0, corpus_episodes=100)
    model_dir = out / "model"
    built = build_random(model_dir, root / MODEL_CONFIG, tokenizer_dir=out / "tokenizer", seed=0)
    manifest = image_manifest or {"image": ensure_image(params.settings("image").written(), root)}
    sandbox = sandbox_config(params, run_id=registry.RUN_ID, image_manifest=manifest, backend=backend,
                             overrides={"network": "none"})
    agent_cfg = agent_config(params, sandbox=sandbox)
    tasks = rehearsal_tasks()
    report: dict[str, Any] = {"profile": profile, "model": {"config": MODEL_CONFIG, "params": built["params"]},
                              "sandbox_backend": sandbox.backend, "parts": list(only), "steps": steps,
                              "sft": {}, "grpo": {}, "checks": []}
    for rank in (0, LORA["rank"]):
        if f"sft:lora{rank}" in only:
            report["sft"][f"lora{rank}"] = _sft(params, model_dir, tasks, out / f"sft-lora{rank}", rank, threads,
                                                report)
    for cfg in CONFIGS:
        if f"grpo:{cfg['name']}" in only:
            report["grpo"][cfg["name"]] = _grpo(params, model_dir, tasks, out / f"grpo-{cfg['name']}", cfg, sandbox,
                                                agent_cfg, steps, threads, report)
    report["wall_s"] = round(time.monotonic() - t0, 1)
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    report["ok"] = all(c["ok"] for c in report["checks"])
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    return report


def _check(report: dict[str, Any], name: str, ok: bool, value: Any) -> None:
    report["checks"].append({"check": name, "ok": bool(ok), "value": value})
    (log.info if ok else log.error)("rehearsal: %s: %s (%s)", name, "ok" if ok else "FAILED", value)


def sft_settings(params, rank: int, threads: int) -> SftSection:
    """The SFT part's settings: the profile's, 2 steps, LoRA of ``rank`` (0: off)."""
    sec = params.settings("sft")
    return sec.model_copy(update={"steps": 2, "held_out": 0.0, "threads": threads, "checkpoint_every": 1, "lr": 1e-3,
                                  "lora": sec.lora.model_copy(update={**LORA, "rank": rank})})


def grpo_settings(params, cfg: dict[str, Any], steps: int, threads: int, server_url: str | None = None) -> GrpoSection:
    """A GRPO configuration's settings (``cfg``: one of :data:`CONFIGS`): the profile's, ``steps`` steps,
    4 turns an episode, its LoRA and importance sampling; in server mode the policy at ``server_url``."""
    g = params.settings("grpo")
    vllm = g.vllm.model_copy(update={"mode": "server", "base_url": server_url, "sync": "files", "command": None}
                             if cfg["server"] else {"mode": "none"})
    return g.model_copy(update={"steps": steps, "save_every": 1, "max_turns": 4, "threads": threads, "vllm": vllm,
                                "lora": g.lora.model_copy(update=cfg["lora"]),
                                "importance_sampling": g.importance_sampling.model_copy(update={"mode": cfg["is_mode"]})})


def _sft(params, model_dir: Path, tasks: list, out: Path, rank: int, threads: int, report) -> dict[str, Any]:
    s = sft_settings(params, rank, threads)
    m = train_sft(model_dir, sft_records(tasks), out, s, ckpt_dir=out.parent / f".ckpt-{out.name}")
    losses = m["loss"]
    LocalHFModel.load(out, device="cpu")
    _check(report, f"sft lora {rank}: 2 steps, finite loss, the model written loads",
           m["steps_done"] == 2 and math.isfinite(losses["final"]), {"steps": m["steps_done"], "loss": losses})
    return {"steps": m["steps_done"], "loss": losses, "data": m["data"], "parameters": m["parameters"],
            "wall_s": m["wall_s"], "settings": {"batch_size": s.batch_size, "max_tokens": s.max_tokens}}


def _grpo(params, model_dir: Path, tasks: list, out: Path, cfg: dict[str, Any], sandbox, agent_cfg, steps: int,
          threads: int, report) -> dict[str, Any]:
    import contextlib

    g = params.settings("grpo")
    srv = None
    with contextlib.ExitStack() as stack:
        if cfg["server"]:  # the stand-in server: its own copy of the start weights, the paper's engine budget
            served = LocalHFModel.load(model_dir, name="served", device="cpu", seed=0,
                                       **g.engine.model_dump())
            srv = stack.enter_context(ChatServer(served))
            stack.callback(served.close)
        s = grpo_settings(params, cfg, steps, threads, srv.base_url[:-3] if srv else None)
        pool = stack.enter_context(SandboxPool(sandbox, max_concurrent=s.group_batch, warm=s.group_batch))
        t0 = time.monotonic()
        summary = train_grpo(model_dir, tasks, out, s, agent_cfg=agent_cfg, pool=pool, mode="sandbox",
                             ckpt_dir=out.parent / f".ckpt-{out.name}", log_path=out.parent / f"steps-{out.name}.jsonl",
                             engine_wrapper=lambda inner, policy: ScriptedTurns(inner, policy.model, policy.tokenizer))
        wall = time.monotonic() - t0
    rows = StepLog(out.parent / f"steps-{out.name}.jsonl").rows()
    name = cfg["name"]
    _check(report, f"grpo {name}: {steps} steps of {s.group_batch} episodes", len(rows) == steps
           and all(r["episodes"] == s.group_batch for r in rows), [r["episodes"] for r in rows])
    _check(report, f"grpo {name}: every loss computation in train mode, one per episode",
           all(r["loss_calls"] == s.group_batch and r["loss_calls_eval_mode"] == 0 for r in rows),
           [(r["loss_calls"], r["loss_calls_eval_mode"]) for r in rows])
    ratios = [(r["is_ratio_min"], r["is_ratio_max"]) for r in rows]
    _check(report, f"grpo {name}: sampler-trainer ratio within 1e-3 of 1",
           all(lo is not None and 1 - 1e-3 <= lo <= hi <= 1 + 1e-3 for lo, hi in ratios), ratios)
    outcomes = [r["outcomes"] for r in rows]
    _check(report, f"grpo {name}: the four outcomes counted, summing to the step's episodes",
           all(sum(o.values()) == s.group_batch and o["submitted"] and o["wrong"] and o["policy_fault"]
               for o in outcomes), outcomes)
    _check(report, f"grpo {name}: every group has reward variance", all(r["groups_with_variance"] == 1.0 for r in rows),
           [r["groups_with_variance"] for r in rows])
    hand = [paper_loss_by_hand(r["episode_rewards"], r["episode_trained_tokens"], s.samples_per_prompt) for r in rows]
    # with importance weights w_i = exp(sequence log-ratio_i) (sequence_mask, nothing masked at ratios this close
    # to 1) the loss is -(1/N) sum A_i T_i w_i: within (1/N) sum |A_i| T_i (exp(max |log-ratio|) - 1) of the hand value
    tol = [1e-6 + weight * (math.exp(max(abs(r.get("seq_logratio_min") or 0.0), abs(r.get("seq_logratio_max") or 0.0)))
                            - 1) if s.importance_sampling.mode != "none" else 1e-6
           for r, (_, weight) in zip(rows, hand)]
    diffs = [abs(r["loss_value"] - h) for r, (h, _) in zip(rows, hand)]
    _check(report, f"grpo {name}: the step's loss is the paper's, computed by hand",
           all(d <= t for d, t in zip(diffs, tol)),
           [{"trainer": r["loss_value"], "by_hand": round(h, 8), "diff": d, "tolerance": t}
            for r, (h, _), d, t in zip(rows, hand, diffs, tol)])
    if cfg["lora"].get("rank"):
        changed = _changed_layers(model_dir, out)
        _check(report, f"grpo {name}: merged LoRA changed adapted layers only",
               changed and all(any(m in k for m in cfg["lora"]["target_modules"]) for k in changed), changed[:6])
    keep = ("reward_mean", "outcomes", "faults", "is_ratio_min", "is_ratio_max", "is_masked_fraction",
            "seq_logratio_mean", "seq_logratio_per_1k_tokens", "loss_value", "grad_norm", "episode_tokens_mean",
            "malformed_calls", "turns_cut", "rollout_s", "step_s", "trained_tokens")
    return {"wall_s": round(wall, 1), "steps": [{k: r.get(k) for k in ("step",) + keep} for r in rows],
            "settings": s.model_dump(include={"prompts_per_step", "samples_per_prompt", "micro_batch", "lr",
                                              "max_prompt_tokens", "max_episode_tokens", "max_tokens_per_turn",
                                              "loss_agg", "clip_low", "clip_high", "clip_dual", "engine"}),
            "importance_sampling": s.importance_sampling.model_dump(), "lora_rank": s.lora.rank,
            "server": bool(srv), "prompts_dropped": summary["prompts_dropped"]}


def paper_loss_by_hand(rewards: list[float | None], trained_tokens: list[int], group: int) -> tuple[float, float]:
    """The paper's loss of an on-policy step, ``-(1/N) Σ_i A_i T_i`` (``A_i``: the reward minus its group's
    mean over the episodes that ran, an errored episode 0; ``T_i``: its trained tokens), and
    ``(1/N) Σ_i |A_i| T_i`` (what importance weights near 1 can move it by, per unit)."""
    total = weight = 0.0
    for k in range(0, len(rewards), group):
        rs = rewards[k:k + group]
        ran = [r for r in rs if r is not None]
        mean = sum(ran) / len(ran) if ran else 0.0
        for r, t in zip(rs, trained_tokens[k:k + group]):
            if r is not None:
                total += (r - mean) * t
                weight += abs(r - mean) * t
    return -total / len(rewards), weight / len(rewards)


def _changed_layers(before: Path, after: Path) -> list[str]:
    from safetensors.torch import load_file

    a, b = load_file(str(before / "model.safetensors")), load_file(str(after / "model.safetensors"))
    return sorted(k for k in a if k in b and not (a[k].float() == b[k].float()).all())

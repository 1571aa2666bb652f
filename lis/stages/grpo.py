"""The ``grpo`` stage: GRPO in the sandbox on one training-data variant (the paper's LLM-in-Sandbox-RL),
and the command that ``llm_rl`` (the LLM-RL baseline) and ``grpo_replicate`` run too.

    lis train grpo --data files  --out data/models/grpo-files --logs data/train/runs/grpo-files
    lis train grpo --mode vanilla --data files --out data/models/llm-rl --logs data/train/runs/llm-rl   # LLM-RL

Sandbox RL: the training context tasks of a variant (Table 7: ``files`` — documents as files, the
default; ``prompt`` — the same tasks with the documents in the prompt; ``math`` — a math-only set) run
in the sandbox with the three tools. LLM-RL (the paper's Table 5/6 baseline): the same tasks and
recipe, context in the prompt, no tools, one turn (params ``llm_rl`` over ``grpo``).

The training itself is :func:`lis.train.grpo.trainer.train_grpo`. Under ``accelerate launch
--num_processes N`` every rank runs the stage with its own sandbox pool (``sandbox_workers`` each) and its
share of each step's episodes; rank 0 alone writes the outputs.
"""
from __future__ import annotations

import csv
import json
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lis import layout
from lis.errors import LisError
from lis.manifest import read_image_manifest, read_model_manifest, stage_manifest, write_json
from lis.models.serve_plan import STATE_DIR
from lis.params import Params
from lis.runtime import agent_config, sandbox_config
from lis.sandbox import registry
from lis.sandbox.pool import SandboxPool
from lis.stages.spec import Option, Plot, Stage
from lis.tasks.io import read_tasks
from lis.train.grpo.columns import PLOT_COLUMNS, cell
from lis.config.training import GrpoSection
from lis.train.grpo.settings import checkpoint_key
from lis.train.grpo.trainer import StepLog, train_grpo, world
from lis.train.grpo.vllm_server import ServerMode
from lis.train.plan import check_run
from lis.train.rollout.outcome import OUTCOMES
from lis.util.files import sha256_file
from lis.util.hashing import hash_obj
from lis.util.log import console

STAGE = Stage(
    name="grpo",
    item="variant",
    title="GRPO in the sandbox on the ${item} variant",
    priority=40,
    threads="grpo.threads",
    foreach="${jobs.grpo_data}",
    cmd=("lis train grpo --init data/models/sft --data ${item} --out data/models/grpo-${item} --logs "
         "data/train/runs/grpo-${item} --image-manifest data/image/manifest.json --profile ${profile} "
         "--log logs/train/grpo-${item}.log"),
    params=("grpo", "agent", "sandbox"),
    deps=("data/models/sft", "data/train/context/${item}.jsonl", "data/image/manifest.json"),
    outs=("data/models/grpo-${item}",),
    metrics=("data/train/runs/grpo-${item}/metrics.json",),
    plots=(Plot("data/train/runs/grpo-${item}/train_log.csv", x="step", y="reward_mean"),),
)

log = logging.getLogger("lis.train.grpo")

CHECKPOINTS = Path("data/train/checkpoints")  # outside every declared output: survives a killed run
MODES = ("sandbox", "vanilla")
OPTIONS = (
    Option("--data", "Training-data variant: files | prompt | math (data/train/context/<variant>.jsonl), or a JSONL path.",
           default="files", to="input"),
    Option("--mode", "sandbox (LLM-in-Sandbox-RL) | vanilla (the LLM-RL baseline: context in the prompt, no tools).",
           default="sandbox", choices=MODES),
    Option("--seed-offset", "Train with seed grpo.seed + N (a replicate of the learning check).", int, 0,
           low=0, high=1000000),
)
HELP = {"init": "The model to start from.", "out": "Folder to write the trained model into.",
        "logs": "Folder for metrics.json and train_log.csv.",
        "image_manifest": "The image stage's manifest (sandbox mode)."}


@dataclass(frozen=True)
class Settings:
    """One run of the stage (:func:`resolve`): the params the agent and the sandbox are built from, the
    ``grpo`` section typed with the run's overrides, and the mode."""

    params: Params
    grpo: GrpoSection
    mode: str


def check_mode(mode: str) -> None:
    """A usage error for a mode that is neither ``sandbox`` nor ``vanilla``."""
    if mode not in MODES:
        raise LisError(f"unknown --mode {mode!r}", "use sandbox or vanilla")


def resolve(params: Params, mode: str = "sandbox", seed_offset: int = 0) -> Settings:
    """The settings of a run in ``mode`` (``sandbox``, or ``vanilla``: the LLM-RL baseline, params ``llm_rl``
    over ``grpo``), trained with seed ``grpo.seed + seed_offset`` (a replicate of the learning check).
    Raises LisError for an unknown mode, ParamsError naming a bad key or value of ``grpo``."""
    check_mode(mode)
    grpo = params.settings("grpo")
    llm_rl = params.settings("llm_rl").model_dump() if mode == "vanilla" else {}
    update = {k: v for k, v in llm_rl.items() if v is not None}  # null: as grpo
    if seed_offset:
        update["seed"] = grpo.seed + seed_offset
    return Settings(params=params, grpo=grpo.model_copy(update=update), mode=mode)


def data_path(data: str | Path) -> Path:
    """A training-data variant's tasks (``files`` -> data/train/context/files.jsonl), or the JSONL named."""
    return Path(data) if str(data).endswith(".jsonl") else layout.path(layout.CONTEXT_TASKS, variant=str(data))


def summary(metrics: dict[str, Any]) -> str:
    """What the terminal shows (nothing on a rank other than 0 under accelerate launch: rank 0 reports)."""
    return json.dumps({k: v for k, v in metrics.items() if k != "settings"}, indent=1) if metrics.get("written", True) else ""


def run(run_settings: Settings, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict[str, Any]:
    """Train from ``inputs["init"]`` on the tasks of ``inputs["data"]`` (``inputs["image_manifest"]``: the
    image stage's manifest, sandbox mode) into ``outputs["out"]`` (the model and its manifest) and
    ``outputs["logs"]`` (``metrics.json``, which is returned, and ``train_log.csv``). Checkpoints are kept
    under data/train/checkpoints/<name>-<hash of settings, mode, start and tasks> until the model is
    written: a killed run resumes from its last one. Under ``accelerate launch`` a rank other than 0
    returns ``{"written": False, ...}``."""
    t0 = time.monotonic()
    params, settings, mode = run_settings.params, run_settings.grpo, run_settings.mode
    init, data, image_manifest = inputs["init"], data_path(inputs["data"]), inputs["image_manifest"]
    out, logs = outputs["out"], outputs["logs"]
    name = out.name
    if not (init / "config.json").is_file():
        raise LisError(f"no model to start from in {init}", "run the sft stage first (lis train sft)")
    if not data.is_file():
        raise LisError(f"no training tasks at {data}", "run the context_tasks stage first (lis context-tasks)")
    tasks = read_tasks(data)  # strictly: a corrupt row is one error line naming the file and line, never dropped
    if not tasks:
        raise LisError(f"{data} holds no task", "check the context_tasks stage's output")
    # will it fit? one line naming the largest term and its knob, before any work (lis train plan)
    memory_plan = check_run(settings, "grpo", init)
    init_manifest = read_model_manifest(init)
    key = hash_obj({"settings": checkpoint_key(settings), "mode": mode, "init": init_manifest.get("weights_sha256")
                    or sha256_file(init / "model.safetensors"), "data": hash_obj([t.id for t in tasks])})
    ckpt = CHECKPOINTS / f"{name}-{key}"
    ckpt.mkdir(parents=True, exist_ok=True)
    rank, n_proc = world()
    sandbox = sandbox_config(params, run_id=registry.RUN_ID,
                             image_manifest=read_image_manifest(image_manifest) if mode != "vanilla" else None,
                             backend=settings.sandbox_backend, deterministic=settings.rollout.deterministic)
    agent_cfg = agent_config(params, sandbox=sandbox, deterministic=settings.rollout.deterministic)
    log.info("%s: %d steps of %d prompts x %d samples from %s on %d %s tasks (%s mode%s); checkpoints in %s", name,
             settings.steps, settings.prompts_per_step, settings.samples_per_prompt, init, len(tasks), data.stem,
             mode, "" if mode == "vanilla" else f", {sandbox.backend} sandboxes", ckpt)
    if n_proc > 1:
        log.info("%s: rank %d of %d (world size %d): this rank runs %d of the %d episodes of each step", name, rank,
                 n_proc, n_proc, settings.group_batch // n_proc, settings.group_batch)
    tmp = out.parent / f".{out.name}.tmp"
    if rank == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    server = ServerMode.from_settings(settings.vllm)
    if server is not None:  # generation on a vLLM server: up (started when grpo.vllm.command says how) first
        server.require_vllm()
        server.start(init, params.root / STATE_DIR)
    try:
        summary = _train(settings, init, tasks, tmp, agent_cfg, sandbox, mode, ckpt, n_proc)
    finally:
        if server is not None:
            server.stop()
    if not summary["main"]:  # rank 0 writes the model, logs and metrics
        log.info("%s: rank %d of %d done; rank 0 writes the outputs", name, summary["rank"], summary["world_size"])
        return {"model": name, "rank": summary["rank"], "world_size": summary["world_size"], "written": False}
    rows = StepLog(ckpt / "steps.jsonl").rows()
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "train_log.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=PLOT_COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: cell(r.get(k)) for k in PLOT_COLUMNS})
    wall = time.monotonic() - t0
    metrics = {"model": name, "mode": mode, "data": data.stem, "steps": len(rows), "wall_s": round(wall, 1),
               "resumed_from": summary["resumed_from"], "sandbox_backend": None if mode == "vanilla" else sandbox.backend,
               "reward_first": rows[0]["reward_mean"] if rows else None,
               "reward_last": rows[-1]["reward_mean"] if rows else None,
               "reward_mean_last10": round(sum(r["reward_mean"] for r in rows[-10:]) / len(rows[-10:]), 4) if rows else None,
               "reward_mean_first10": round(sum(r["reward_mean"] for r in rows[:10]) / len(rows[:10]), 4) if rows else None,
               "drift_episodes": sum(r["drift_episodes"] for r in rows), "errors": sum(r["errors"] for r in rows),
               "outcomes": {o: sum((r.get("outcomes") or {}).get(o, 0) for r in rows) for o in OUTCOMES},
               "faults": _summed([r.get("faults") or {} for r in rows]),
               "prompts_dropped": summary.get("prompts_dropped", 0), "tasks": summary.get("tasks"),
               "prompts_dropped_ids": summary.get("prompts_dropped_ids", []),
               "precision": summary.get("precision"), "lora_rank": summary.get("lora_rank"),
               "is_masked_fraction_max": max((r.get("is_masked_fraction") or 0.0 for r in rows), default=None),
               "episodes": sum(r["episodes"] for r in rows), "world_size": summary["world_size"],
               "duplicate_episodes": sum(r.get("duplicate_episodes", 0) for r in rows),
               "episodes_by_rank": [sum((r.get("episodes_by_rank") or [r["episodes"]])[k] for r in rows)
                                    for k in range(summary["world_size"])],
               "sampling": summary.get("sampling"),
               "is_ratio_min": min((r["is_ratio_min"] for r in rows if r.get("is_ratio_min") is not None), default=None),
               "is_ratio_max": max((r["is_ratio_max"] for r in rows if r.get("is_ratio_max") is not None), default=None),
               "logprob_diff_max": max((r["logprob_diff_max"] for r in rows if r.get("logprob_diff_max") is not None),
                                       default=None),
               "loss_calls_eval_mode": sum(r.get("loss_calls_eval_mode") or 0 for r in rows),
               "settings": settings.model_dump(exclude_unset=True),
               "deterministic": _deterministic(settings, rows),
               "memory_plan": {k: memory_plan[k] for k in ("peak_gb", "peak_phase", "capacity_gb", "phases_gb",
                                                           "disk_gb", "setup", "dtypes")}}
    write_json(logs / "metrics.json", metrics)
    weights = tmp / "model.safetensors"
    manifest = stage_manifest(name, params.root, params.profile, hash_obj(metrics["settings"]), wall, kind="grpo",
                              mode=mode, data=str(data), init=str(init), init_id=init_manifest.get("id"),
                              weights_sha256=sha256_file(weights) if weights.is_file() else None,
                              steps=len(rows), checkpoint_dir=str(ckpt), world_size=summary["world_size"],
                              written_by_rank=summary["rank"])
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    shutil.rmtree(ckpt, ignore_errors=True)  # finished: the model is the output now
    log.info("%s: done in %.0f s (%d steps; reward %s → %s); %d episodes (world size %d), %d with drift, %d errors",
             name, wall, len(rows), metrics["reward_mean_first10"], metrics["reward_mean_last10"], metrics["episodes"],
             summary["world_size"], metrics["drift_episodes"], metrics["errors"])
    return metrics


def _train(settings, init: Path, tasks: list, tmp: Path, agent_cfg, sandbox, mode: str, ckpt: Path,
           n_proc: int) -> dict[str, Any]:
    if mode == "vanilla":
        return train_grpo(init, tasks, tmp, settings, agent_cfg=agent_cfg, pool=None, mode=mode, ckpt_dir=ckpt,
                          log_path=ckpt / "steps.jsonl", progress=console.is_terminal)
    workers = min(settings.sandbox_workers, max(1, settings.group_batch // n_proc))  # this rank's episodes
    # every episode of a step finds its sandbox started; the next step's start while the trainer updates
    with SandboxPool(sandbox, max_concurrent=workers, warm=workers) as pool:
        return train_grpo(init, tasks, tmp, settings, agent_cfg=agent_cfg, pool=pool, mode=mode, ckpt_dir=ckpt,
                          log_path=ckpt / "steps.jsonl", progress=console.is_terminal)


def _summed(counts: list[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))


def _deterministic(settings, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether the run is a function of its seed alone (grpo.rollout.deterministic, in-process
    generation, no wall-clock limit deciding an episode; docs/training.md, "Determinism"). Episodes
    whose programs wrote errors at once are counted: the mode put their stderr in a fixed order
    (lis.agent.tools.stderr_order), so they do not make the run irreproducible, except what it cannot
    order (unordered_output: a continued message of a program that ran as two processes)."""
    mode = settings.rollout.deterministic
    limited = sum(int(r.get("wall_clock_limited") or 0) for r in rows)
    concurrent = sum(int(r.get("concurrent_output") or 0) for r in rows)
    unordered = sum(int(r.get("unordered_output") or 0) for r in rows)
    return {"mode": mode, "wall_clock_limited_episodes": limited, "concurrent_output_episodes": concurrent,
            "unordered_output_episodes": unordered, "reproducible": mode and limited == 0 and unordered == 0}


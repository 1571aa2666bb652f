"""``lis train``: the training stages — base model, teacher episodes, SFT warm start (and RFT).

The stages' commands (``base``, ``teacher``, ``sft``, ``grpo``) are made from their declarations in
lis/stages/ (lis/cli/stage_command.py); ``lis train compare`` is lis/cli/train_compare.py; this module
holds the tools around them.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.errors import LisError
from lis.manifest import read_image_manifest
from lis.models.base import Sampling
from lis.models.local_hf import LocalHFModel
from lis.runtime import sandbox_config
from lis.sandbox import registry
from lis.offline.agent_check import check_agent
from lis.train.plan import default_setups, plain, plan_stages, plans_json, read_accelerate, refusal, render
from lis.train.plan.measure import measure_model, render as render_measured
from lis.train.tiny_agent import build_tiny_agent
from lis.util.log import setup_logging

app = typer.Typer(help="Training stages: base model, teacher episodes, SFT warm start, RFT, GRPO in the sandbox.",
                  no_args_is_help=True)
log = logging.getLogger("lis.train")


@app.command("tiny-agent")
def tiny_agent(out: Path = typer.Option(..., "--out", help="Folder to write the tiny agent into."),
               image_manifest: Optional[Path] = typer.Option(None, "--image-manifest",
                                                             help="The image stage's manifest (default: the image "
                                                                  "the image params name)."),
               profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
               log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """The offline tiny agent in one command: the base, teacher and sft stages of the profile into OUT
    (the pipeline runs them as separate stages into data/)."""

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    p = load_params(profile, params_file)
    sb = sandbox_config(p, run_id=registry.RUN_ID, image_manifest=read_image_manifest(image_manifest) if image_manifest else None,
                        backend=p.settings("teacher").sandbox_backend)  # as the teacher stage
    manifest = build_tiny_agent(out, p, sb)
    typer.echo(json.dumps({"path": str(out), **{k: manifest[k] for k in ("loss", "data", "teacher", "wall_s")}},
                          indent=1))


@app.command("check")
def check(model_dir: Path = typer.Argument(..., help="A local model folder (e.g. data/models/sft)."),
          per_domain: int = typer.Option(2, "--per-domain", max=1000, min=1, help="Sample tasks per domain."),
          seed: int = typer.Option(0, "--seed", min=0, max=2**32 - 1),
          profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
          log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """How a model behaves as an agent on the offline sample tasks, in real sandboxes: valid tool
    calls, episodes that submit, answer files, answers of the domain's form (JSON)."""

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    p = load_params(profile, params_file)
    sandbox = sandbox_config(p, run_id=registry.RUN_ID)
    model = LocalHFModel.load(model_dir, name=model_dir.name, device="cpu", seed=seed)
    report = check_agent(model, sandbox, per_domain=per_domain, max_turns=p.settings("agent").max_turns,
                         sampling=Sampling(temperature=0.7, top_p=0.8, top_k=20, max_tokens=192), seed=seed)
    typer.echo(json.dumps(report, indent=1))


@app.command("plan")
def plan(stage: str = typer.Option("all", "--stage", help="grpo | sft | all."),
         model: Optional[str] = typer.Option(None, "--model", help="A config JSON (data/model_configs/), a model "
                                                                   "folder or a models entry (default: the stage's "
                                                                   "start model, params `base`)."),
         accelerate: Optional[Path] = typer.Option(None, "--accelerate", dir_okay=False,
                                                   help="An accelerate config (workflow/accelerate/*.yaml)."),
         gpus: Optional[int] = typer.Option(None, "--gpus", min=1, max=1024, help="Processes (GPUs) of the node; "
                                                                                  "overrides num_processes."),
         gpu_memory_gb: Optional[float] = typer.Option(None, "--gpu-memory-gb", min=0.1, max=1e6,
                                                       help="Memory of each GPU (default 80)."),
         cpu_memory_gb: Optional[float] = typer.Option(None, "--cpu-memory-gb", min=0.1, max=1e8,
                                                       help="CPU memory of the node (default: not judged)."),
         json_out: Optional[Path] = typer.Option(None, "--json", dir_okay=False, help="Also write the plans as JSON."),
         measure: Optional[Path] = typer.Option(None, "--measure", file_okay=False,
                                                help="Instead: measure peak memory of real CPU training steps of this "
                                                     "model folder beside the estimate (fresh processes)."),
         measure_tokens: Optional[int] = typer.Option(None, "--measure-tokens", min=16, max=1 << 20,
                                                      help="Positions per sequence of the measurements (default: "
                                                           "by model size)."),
         profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
         log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Will it fit? GB per GPU (and CPU) and disk per checkpoint of SFT and GRPO from the model's shape, the
    params and the accelerate config. Without setup options: the paper's setup (8 x 80 GB, fsdp_offload)
    beside one 80 GB GPU (deepspeed_zero3_offload). With --accelerate / --gpus / --gpu-memory-gb: that
    setup alone, refused (exit 2, one line: the largest term and the knob that shrinks it) when it cannot
    fit. --measure FOLDER: the estimate against measured peaks on the CPU (docs/training.md)."""

    setup_logging(log_file, verbose)
    if stage not in ("grpo", "sft", "all"):
        raise LisError(f"unknown --stage {stage!r}", "use grpo, sft or all")
    stages = ["grpo", "sft"] if stage == "all" else [stage]
    if measure is not None:
        if not (measure / "config.json").is_file():
            raise LisError(f"no model folder at {measure} (no config.json)", "give a model folder, e.g. "
                           "data/models/base (lis train base) or one `lis model random` wrote")
        rows = measure_model(measure, tokens=measure_tokens, stages=tuple(stages),
                             progress=lambda r: log.info("measured %s %s: %.3f GB (estimate %.3f)", r["stage"],
                                                         "checkpointing" if r["checkpointing"] else "",
                                                         r["measured_gb"], r["estimate_gb"]))
        typer.echo(render_measured(rows))
        if json_out:
            json_out.write_text(json.dumps(rows, indent=1) + "\n")
        return
    p = load_params(profile, params_file)
    explicit = accelerate is not None or gpus is not None or gpu_memory_gb is not None
    if explicit:
        setups = [read_accelerate(accelerate, gpus=gpus, gpu_memory_gb=gpu_memory_gb, cpu_memory_gb=cpu_memory_gb)
                  if accelerate else plain(gpus or 1, gpu_memory_gb=gpu_memory_gb, cpu_memory_gb=cpu_memory_gb)]
    else:
        setups = default_setups(p.root, cpu_memory_gb=cpu_memory_gb)
    shape, source, plans = plan_stages(p, stages, setups, model)
    typer.echo(f"model: {shape.describe()} — from {source}; profile {p.profile}\n")
    typer.echo("\n\n".join(render(ps) for ps in plans.values()))
    if json_out:
        json_out.write_text(json.dumps({"profile": p.profile, "model_source": source,
                                        "plans": {k: plans_json(v) for k, v in plans.items()}}, indent=1) + "\n")
    if explicit:
        refused = [ps[0] for ps in plans.values() if not ps[0].fits]
        if refused:
            raise refusal(refused[0])

@app.command("rehearse")
def rehearse(out: Path = typer.Option(Path(layout.REHEARSAL_DIR), "--out", help="Folder for the rehearsal's models, "
                                                                                  "logs and report.json (replaced)."),
             backend: str = typer.Option("auto", "--backend", help="Sandbox backend: docker | bwrap | auto."),
             steps: int = typer.Option(2, "--steps", min=1, max=20, help="GRPO steps per configuration."),
             threads: int = typer.Option(2, "--threads", min=1, max=256, help="CPU threads."),
             only: Optional[str] = typer.Option(None, "--only", help="Comma-separated parts to run (default: all): "
                                                "sft:lora0, sft:lora8, grpo:local-full, grpo:server-lora."),
             profile: Optional[str] = typer.Option("full", "--profile", help="The params profile rehearsed."),
             params_file: Optional[Path] = ParamsFile,
             log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Rehearse the profile's training (default: full, the paper's settings) on a random-init Qwen3 built
    here: SFT and GRPO steps at its configured batch, budgets, loss and engine, in real sandboxes, in
    process and through a served model, LoRA off and on; checks every step (docs/training.md, "Paper
    scale, rehearsed"). --only runs some parts (the test suite: grpo:local-full, 1 step). Exit 1 when
    a check fails."""
    from lis.train.rehearsal import rehearse as run_rehearsal  # lazy: loads torch; `lis train plan` does not
    from lis.train.rehearsal.run import parts  # lazy: as above

    chosen = parts(only)
    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    p = load_params(profile, params_file)
    report = run_rehearsal(p, out, backend=backend, steps=steps, threads=threads, only=chosen)
    typer.echo(json.dumps({k: report[k] for k in ("ok", "profile", "parts", "model", "sandbox_backend", "wall_s",
                                                  "peak_rss_mb", "checks")}, indent=1))
    if not report["ok"]:
        raise typer.Exit(1)


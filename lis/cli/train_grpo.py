"""``lis train grpo``: the command line of the ``grpo`` stage (lis/stages/grpo.py), which the ``llm_rl`` and
``grpo_replicate`` stages run too. Its options, then the stage's ``resolve`` and ``run``. (A module of its
own, as ``lis train base`` and ``lis train teacher`` are, so that the other training stages' code does not
include the GRPO stage's module.)"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.sandbox import registry
from lis.stages import grpo as stage
from lis.util.log import setup_logging


def grpo(init: Path = typer.Option(layout.path(layout.MODEL, model="sft"), "--init", help="The model to start from."),
         data: str = typer.Option("files", "--data", help="Training-data variant: files | prompt | math "
                                                          "(data/train/context/<variant>.jsonl), or a JSONL path."),
         mode: str = typer.Option("sandbox", "--mode", help="sandbox (LLM-in-Sandbox-RL) | vanilla (the LLM-RL "
                                                            "baseline: context in the prompt, no tools)."),
         out: Path = typer.Option(..., "--out", help="Folder to write the trained model into."),
         logs: Path = typer.Option(..., "--logs", help="Folder for metrics.json and train_log.csv."),
         image_manifest: Path = typer.Option(Path(layout.IMAGE_MANIFEST), "--image-manifest",
                                             help="The image stage's manifest (sandbox mode)."),
         seed_offset: int = typer.Option(0, "--seed-offset", max=1000000, min=0,
                                         help="Train with seed grpo.seed + N (a replicate of the learning check)."),
         profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile, sets: Optional[list[str]] = Sets,
         log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """GRPO in the sandbox with TRL (params `grpo`; the LLM-RL baseline also reads `llm_rl`): our agent
    loop as the rollout, episodes of a step run concurrently, token-exact, resumable from checkpoints.
    Several processes: `accelerate launch --config_file workflow/accelerate/<config>.yaml $(which lis)
    train grpo ...` (each rank its share of the episodes, rank 0 writes the outputs)."""

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    stage.check_mode(mode)  # a usage error before the params are read
    settings = stage.resolve(load_params(profile, params_file, sets), mode, seed_offset)
    path = Path(data) if data.endswith(".jsonl") else layout.path(layout.CONTEXT_TASKS, variant=data)
    metrics = stage.run(settings, {"init": init, "data": path, "image_manifest": image_manifest},
                        {"out": out, "logs": logs})
    if not metrics.get("written", True):  # a rank other than 0 under accelerate launch: rank 0 reports
        return
    typer.echo(json.dumps({k: v for k, v in metrics.items() if k != "settings"}, indent=1))

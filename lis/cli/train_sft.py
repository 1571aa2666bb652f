"""``lis train sft``: the command line of the ``sft`` stage (lis/stages/sft.py), which the ``sft_replicate``
stage runs too. Its options, then the stage's ``resolve`` and ``run``. (A module of its own, as the other
training stages' commands are, so that their code does not include the SFT stage's module.)"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.stages import sft as stage
from lis.util.log import setup_logging


def sft(base_dir: Path = typer.Option(layout.path(layout.MODEL, model="base"), "--base", help="The model to fine-tune."),
        data: Path = typer.Option(Path(layout.TEACHER_TRAJECTORIES), "--data",
                                  help="Trajectory records; the successful ones are trained on."),
        out: Path = typer.Option(layout.path(layout.MODEL, model="sft"), "--out", help="Folder to write the fine-tuned model into."),
        seed_offset: int = typer.Option(0, "--seed-offset", max=1000000, min=0,
                                        help="Train with seed sft.seed + N (a replicate of the learning check)."),
        profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile, sets: Optional[list[str]] = Sets,
        log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """SFT warm start (params `sft`, PyTorch Lightning): assistant-only loss on the successful
    trajectories of DATA; checkpoints and resume, seed, CSV logs. sft.steps 0 copies the base."""

    setup_logging(log_file, verbose)
    settings = stage.resolve(load_params(profile, params_file, sets), seed_offset)
    manifest = stage.run(settings, {"base": base_dir, "data": data}, {"out": out})
    if not manifest.get("written", True):  # a DDP rank other than 0: rank 0 wrote the model and says so
        return
    typer.echo(json.dumps({k: manifest[k] for k in ("steps_done", "loss", "data", "world_size", "ranks", "wall_s")},
                          indent=1))

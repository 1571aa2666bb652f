"""``lis train base``: the command line of the ``base`` stage (lis/stages/base.py) — the starting model.
Its options, then the stage's ``resolve`` and ``run``, then the manifest on the terminal. (Kept out of
lis/cli/train.py, as ``lis train compare`` is, so that the other training stages' code does not
include the base stage's module: an edit to one stage's declaration re-runs that stage alone.)"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.stages import base as stage
from lis.util.log import setup_logging


def base(out: Path = typer.Option(layout.path(layout.MODEL, model="base"), "--out", help="Folder to write the base model into."),
         context_tasks: Optional[Path] = typer.Option(None, "--context-tasks",
                                                      help="Training context tasks whose prompts join the tiny "
                                                           "tokenizer's corpus."),
         profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile, sets: Optional[list[str]] = Sets,
         log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """The starting model (params `base`): the tiny offline Qwen3 built here (random weights, its
    own tokenizer), a hub model at a revision, or a local folder."""

    setup_logging(log_file, verbose)
    settings = stage.resolve(load_params(profile, params_file, sets))
    manifest = stage.run(settings, {"context_tasks": context_tasks}, {"out": out})
    typer.echo(json.dumps({k: v for k, v in manifest.items() if k != "versions"}, indent=1))

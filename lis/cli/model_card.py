"""``lis model card``: the command line of the ``model_card`` stage (lis/stages/model_card.py).

A module of its own, so that the stage's code is the card's and not ``lis model random``'s (the
random-init builder of lis/offline): ``lis pipeline check`` follows the module that defines a command.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.stages import model_card as stage
from lis.util.log import setup_logging


# its options, then the stage's `resolve` and `run`; attached to `lis model` from the declaration (lis.cli.GROUPS)
def card(model: str = typer.Option(..., "--model", "-m", help="A models entry listed in jobs.external."),
         out: Path = typer.Option(..., "--out", help="Folder to write card.json into (data/models/<name>)."),
         profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile, sets: Optional[list[str]] = Sets,
         log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Record an external model's card (its params entry and what identifies its weights): the
    evaluation of every model depends on data/models/<name>, trained here or carded here."""

    setup_logging(log_file, verbose)
    stage.run(stage.resolve(load_params(profile, params_file, sets), model), {}, {"out": out})

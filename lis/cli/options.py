"""Options shared by every stage command."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer
from typer._click.globals import get_current_context

from lis.params import load, overridden_note, with_overrides
from lis.util.log import note as log_note

Profile = typer.Option(None, "--profile", "-p", help="Profile overlay to apply (default: params.yaml's `profile`).")
ParamsFile = typer.Option(None, "--params", help="params.yaml to read (default: the one in the project root).")
LogFile = typer.Option(None, "--log", dir_okay=False, help="Also append this stage's log to FILE.")
Sets = typer.Option(None, "--set", metavar="KEY=VALUE",
                    help="Override one param for this run (VALUE is YAML: --set sft.lr=1e-4); repeatable.")
Verbose = typer.Option(False, "--verbose", "-v", help="Debug-level logging on the terminal.")


# The params sections each stage command reads, by its words after `lis` (filled by lis.cli from the stage
# declarations): loading params for one of them logs which of those keys the profile overrides.
STAGE_SECTIONS: dict[str, tuple[str, ...]] = {}


def load_params(profile: Optional[str], params_file: Optional[Path], sets: Optional[list[str]] = None):
    """The params of the profile, with the command line's ``--set`` overrides; a stage command logs which
    keys of its sections the profile overrides."""
    params = with_overrides(load(profile=profile, params_file=params_file), sets or [])
    ctx = get_current_context(silent=True)
    sections = STAGE_SECTIONS.get(" ".join(ctx.command_path.split()[1:])) if ctx is not None else None
    note = overridden_note(params, sections) if sections else None
    if note:
        log_note(logging.getLogger("lis.params"), note)
    return params

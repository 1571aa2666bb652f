"""Options shared by every stage command."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from lis.params import load

Profile = typer.Option(None, "--profile", "-p", help="Profile overlay to apply (default: params.yaml's `profile`).")
ParamsFile = typer.Option(None, "--params", help="params.yaml to read (default: the one in the project root).")
LogFile = typer.Option(None, "--log", dir_okay=False, help="Also append this stage's log to FILE.")
Verbose = typer.Option(False, "--verbose", "-v", help="Debug-level logging on the terminal.")


def load_params(profile: Optional[str], params_file: Optional[Path]):
    return load(profile=profile, params_file=params_file)

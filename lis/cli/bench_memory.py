"""``lis bench memory``: the command line of the ``sandbox_memory`` stage (lis/stages/sandbox_memory.py):
memory of one sandbox, idle and busy, from its cgroup (Table 12). Its options, then the stage's
``resolve`` and ``run``, then the result on the terminal.

Registered under ``lis bench`` by lis/cli/__init__.py; a module of its own so that the stage's code
is the memory measurement alone (lis pipeline check)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.sandbox import registry
from lis.stages import sandbox_memory as stage
from lis.util.log import setup_logging


def memory(backend: Optional[str] = typer.Option(None, "--backend", help="docker or bwrap (default: params)."),
           n: Optional[int] = typer.Option(None, "--n", max=1000, min=1,
                                           help="Fresh sandboxes, one at a time (default: sandbox_memory.n, 3)."),
           settle_s: Optional[float] = typer.Option(None, "--settle", max=3600.0, min=0.0,
                                                    help="Seconds an idle sandbox settles before it is read (2)."),
           interval_s: Optional[float] = typer.Option(None, "--interval", max=60.0, min=0.001,
                                                      help="Seconds between working-set samples (0.02)."),
           image_manifest: Optional[Path] = typer.Option(None, "--image-manifest",
                                                         help="The image stage's manifest (default: the params' tag)."),
           out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON here."),
           profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile, sets: Optional[list[str]] = Sets,
           log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Memory of one sandbox, idle and busy (a numpy/scipy/sympy/pandas computation typical of the
    agent), read from its cgroup: idle and peak working set, the cgroup's high-water mark; mean, n
    and a 95% interval over --n sandboxes (Table 12; definitions in docs/efficiency.md)."""

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    settings = stage.resolve(load_params(profile, params_file, sets), backend=backend, n=n, settle_s=settle_s,
                             interval_s=interval_s)
    res = stage.run(settings, {"image_manifest": image_manifest} if image_manifest is not None else {},
                    {"out": out} if out else {})
    typer.echo(json.dumps(res, indent=1))

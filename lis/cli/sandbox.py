"""``lis sandbox``: look after sandboxes (clean up what runs left, try a command)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import ParamsFile, Profile, load_params
from lis.runtime import sandbox_config
from lis.sandbox import make_sandbox, registry
from lis.sandbox.cleanup import cleanup as do_cleanup

app = typer.Typer(help="Sandboxes: clean up, run a command in a fresh one.", no_args_is_help=True)


@app.command("cleanup")
def cleanup(run: Optional[str] = typer.Option(None, "--run", help="Remove the sandboxes of this run id."),
            everything: bool = typer.Option(False, "--all", help="Remove every lis sandbox (label lis.managed=true)."),
            dry_run: bool = typer.Option(False, "--dry-run", help="Only list what would be removed."),
            profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """Remove sandbox containers lis left behind — ours (label lis.managed=true) and nothing else.

    Default: the orphans (their owner process is gone, or their lifetime is over). --run ID: one
    run's. --all: every lis sandbox, running or not.
    """

    engines = load_params(profile, params_file).settings("sandbox").engines or [None]
    names = do_cleanup(run=run, everything=everything, engines=engines, dry_run=dry_run)
    for n in names:
        typer.echo(("would remove " if dry_run else "removed ") + n)
    typer.echo(f"{len(names)} sandbox(es) {'to remove' if dry_run else 'removed'}")


@app.command("exec")
def exec_(command: str = typer.Argument(..., help="The bash command to run."),
          backend: Optional[str] = typer.Option(None, "--backend", help="docker or bwrap (default: params)."),
          profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """Run one command in a fresh sandbox of the current params and print the result as JSON."""
    registry.install_signal_handlers()
    p = load_params(profile, params_file)
    cfg = sandbox_config(p, run_id=registry.RUN_ID, overrides={"backend": backend})
    with make_sandbox(cfg).start() as sb:
        r = sb.exec(command)
    typer.echo(json.dumps(dataclasses.asdict(r), ensure_ascii=False, indent=1))

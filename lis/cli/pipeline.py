"""``lis pipeline``: the files rendered from the stages' declarations (lis/stages/): dvc.yaml and the
Snakemake rules (workflow/rules/stages.smk)."""
from __future__ import annotations

from pathlib import Path

import typer
from lis.cli.commands import command_entry
from lis.pipeline import problems, write as write_files

app = typer.Typer(help="The files rendered from lis/stages/: dvc.yaml and the Snakemake rules.", no_args_is_help=True)
Root = typer.Option(Path("."), "--root", help="Repository root.")


@app.command("check")
def check(root: Path = Root) -> None:
    """Check that dvc.yaml and workflow/rules/stages.smk are what lis/stages renders, that each stage's
    entry is the function its command runs, and that every path a stage declares is in lis/layout.py."""

    found = problems(root.resolve(), command_entry)
    for p in found:
        typer.echo(p, err=True)
    if found:
        typer.echo(f"{len(found)} problem(s) in the pipeline's declarations", err=True)
        raise typer.Exit(1)
    typer.echo("ok: dvc.yaml and workflow/rules/stages.smk are what lis/stages/ renders")


@app.command("write")
def write(root: Path = Root) -> None:
    """Render dvc.yaml and workflow/rules/stages.smk from lis/stages/ (after editing a stage's module)."""

    for path in write_files(root.resolve()):
        typer.echo(f"wrote {path}")

"""``lis pipeline``: checks on the pipeline declarations."""
from __future__ import annotations

from pathlib import Path

import typer
from lis.cli.commands import command_module
from lis.pipeline import compare, dvc_stages, snakemake_jobs

app = typer.Typer(help="Checks on the pipeline declarations (Snakefile and dvc.yaml).", no_args_is_help=True)


@app.command("check")
def check(root: Path = typer.Option(Path("."), "--root", help="Repository root."),
          target: str = typer.Option("paper", "--target", help="Snakemake target whose jobs are compared.")) -> None:
    """Compare every Snakemake job of TARGET with dvc.yaml: command, dependencies, params, outputs."""

    root = root.resolve()
    snake, dvc = snakemake_jobs(root, target), dvc_stages(root)
    problems = compare(snake, dvc, command_module)
    for p in problems:
        typer.echo(p, err=True)
    if problems:
        typer.echo(f"{len(problems)} difference(s) between the Snakefile and dvc.yaml", err=True)
        raise typer.Exit(1)
    typer.echo(f"ok: {len(dvc)} stage(s) declared identically in the Snakefile and dvc.yaml")

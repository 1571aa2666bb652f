"""``lis pipeline``: the pipeline's declarations — the stage registry (lis/stages), the dvc.yaml it
renders, the Snakefile — and the check that they agree."""
from __future__ import annotations

from pathlib import Path

import typer
from lis.cli.commands import command_entry
from lis.errors import LisError
from lis.pipeline import compare, dvc_file, dvc_stages, snakemake_jobs

app = typer.Typer(help="The pipeline's declarations: the stage registry, dvc.yaml rendered from it, the Snakefile.",
                  no_args_is_help=True)
Root = typer.Option(Path("."), "--root", help="Repository root.")


@app.command("check")
def check(root: Path = Root,
          target: str = typer.Option("paper", "--target", help="Snakemake target whose jobs are compared.")) -> None:
    """Check the declarations: dvc.yaml is what lis/stages renders, each stage's entry is the function
    its command runs, and every Snakemake job of TARGET has the command, dependencies, params and
    outputs of its dvc.yaml stage (the code it runs among its dependencies)."""

    root = root.resolve()
    problems = dvc_file.problems(root) + dvc_file.entry_problems(root, command_entry)
    snake, dvc = snakemake_jobs(root, target), dvc_stages(root)
    problems += compare(snake, dvc)
    for p in problems:
        typer.echo(p, err=True)
    if problems:
        typer.echo(f"{len(problems)} difference(s) between lis/stages, the Snakefile and dvc.yaml", err=True)
        raise typer.Exit(1)
    typer.echo(f"ok: {len(dvc)} stage(s) declared identically in lis/stages, the Snakefile and dvc.yaml")


@app.command("dvc")
def dvc(root: Path = Root,
        write: bool = typer.Option(False, "--write", help="Write dvc.yaml from lis/stages."),
        check: bool = typer.Option(False, "--check", help="Exit 2 when dvc.yaml is not what lis/stages renders.")) -> None:
    """Print dvc.yaml as lis/stages renders it (or write the file, or check it)."""

    text = dvc_file.render(root)
    path = root / dvc_file.PATH
    if write:
        path.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {path}")
    elif check:
        problems = dvc_file.problems(root)
        if problems:
            raise LisError(problems[0].split(": run")[0], "run `lis pipeline dvc --write` after editing lis/stages/")
        typer.echo(f"ok: {path} is up to date")
    else:
        typer.echo(text.rstrip())

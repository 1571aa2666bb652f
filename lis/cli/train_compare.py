"""``lis train compare``: two GRPO runs step by step (not a stage: a reader's tool; kept out of
lis/cli/train.py so that the training stages' code does not include the report's)."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from lis.cli.options import Verbose
from lis.errors import LisError
from lis.report.compare import compare_runs
from lis.util.log import setup_logging


def compare(run_a: Path = typer.Argument(..., help="A GRPO run's train_log.csv (data/train/runs/<run>/)."),
            run_b: Path = typer.Argument(..., help="The other run's train_log.csv."),
            name_a: str = typer.Option("run A", "--name-a", help="Label of the first run."),
            name_b: str = typer.Option("run B", "--name-b", help="Label of the second run."),
            out: Path = typer.Option(Path("paper_figures/figures/compare_runs"), "--out",
                                     help="Figure path without suffix (PNG and PDF are written)."),
            verbose: bool = Verbose) -> None:
    """Two training runs step by step: their rewards overlaid, the paired difference, the steps that
    drew the same prompts, and the first step whose episodes differ (the same seed in the deterministic
    rollout mode: none). Prints the summary as JSON."""

    setup_logging(None, verbose)
    if name_a == name_b:
        raise LisError(f"both runs are labelled {name_a!r}", "give --name-a and --name-b different labels")
    summary = compare_runs({name_a: run_a, name_b: run_b}, out)
    typer.echo(json.dumps(summary, indent=1))

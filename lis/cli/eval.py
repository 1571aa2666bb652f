"""``lis eval``: ``run`` one evaluation job (the evaluation stages' command, made from lis/stages/evaluation.py),
and summarise what has been run (``lis eval summary``: lis/cli/eval_summary.py)."""
from __future__ import annotations

import typer

app = typer.Typer(help="Evaluate models in the sandbox and directly (vanilla), and summarise.", no_args_is_help=True)

"""``lis eval summary``: the paper's result tables of whatever has been run (its own module, so that
the eval stage's code does not include the report's)."""
from __future__ import annotations

from pathlib import Path

import typer
from lis import layout
from lis.errors import LisError
from lis.report.summary import load_metrics, table2, table3


def summary(root: Path = typer.Option(Path(layout.EVAL_ROOT), "--root", help="Where the jobs' outputs are.")) -> None:
    """Print Table 2 (vanilla → sandbox per model and domain) and Table 3 (long context) of what has run.

    Each accuracy is shown with its n (scored episodes) and, when there were any, its errors."""
    from rich.console import Console
    from rich.table import Table

    if root.exists() and not root.is_dir():
        raise LisError(f"--root {root} is a file, not a folder", "give the folder of the eval jobs (data/eval)")
    metrics = load_metrics(root)
    if not metrics:
        raise LisError(f"no metrics under {root} yet", "run `lis eval run` or the pipeline")
    con = Console()
    for title, (header, rows, _) in (("Table 2 — accuracy (%): vanilla → sandbox (Δ)", table2(metrics)),
                                     ("Table 3 — long context (%)", table3(metrics))):
        if not rows:
            continue
        t = Table(title=title)
        for h in header:
            t.add_column(h)
        for r in rows:
            t.add_row(*r)
        con.print(t)

"""``lis export inspect``: lis eval jobs as Inspect logs, to browse them in Inspect View."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from lis.cli.options import LogFile, Verbose
from lis.inspect.export import export_jobs
from lis.util.log import setup_logging

app = typer.Typer(help="Export lis runs to other tools' formats.", no_args_is_help=True)


@app.command("inspect")
def inspect(inputs: List[Path] = typer.Argument(..., metavar="JOB...",
                                                help="eval job folders (data/eval/<model>/<domain>/<mode>), or "
                                                     "folders above them (data/eval: every job below it)."),
            out: Path = typer.Option(Path("inspect_logs"), "--out", "-o",
                                     help="Folder to write the .eval logs into (one per job; created if missing)."),
            tasks_file: Optional[Path] = typer.Option(
                None, "--tasks", help="Task JSONL for the targets and prompts (default: data/tasks/<domain>.jsonl "
                                      "of the project the job lies in; without one, targets are empty)."),
            log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Write each eval job as an Inspect log (.eval, Inspect's own log API): one sample per episode
    with its messages, tool calls and observations, score, usage and times, a model and tool event
    per turn, and the job's accuracy and ci95. Then: ``inspect view --log-dir <out>``."""

    setup_logging(log_file, verbose)
    for path in export_jobs(inputs, out, tasks_file):
        typer.echo(str(path))

"""``lis throughput``: the command line of the ``throughput`` stage (lis/stages/throughput.py): queries
per minute, vanilla vs sandbox, against one model endpoint. Its options, then the stage's ``resolve``
and ``run``, then the summary on the terminal."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.sandbox import registry
from lis.stages import throughput as stage
from lis.util.log import setup_logging


def _csv(value: Optional[str]) -> Optional[list[str]]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def throughput(out: Path = typer.Option(Path(layout.THROUGHPUT), "--out", dir_okay=False, help="JSON to write."),
               model: Optional[str] = typer.Option(None, "--model", help="The models entry (endpoint) to measure."),
               domains: Optional[str] = typer.Option(None, "--domains", help="Comma-separated domains."),
               tasks: Optional[int] = typer.Option(None, "--tasks", min=1, max=100000, help="Tasks per domain (the first N)."),
               concurrency: Optional[int] = typer.Option(None, "--concurrency", min=1, max=4096, help="Episodes at once."),
               repeats: Optional[int] = typer.Option(None, "--repeats", min=1, max=1000, help="Timed runs per mode."),
               modes: Optional[str] = typer.Option(None, "--modes", help="Comma-separated modes (vanilla,sandbox)."),
               warm: Optional[int] = typer.Option(None, "--warm", min=0, max=1024, help="Sandboxes started before the clock starts."),
               warmup: Optional[int] = typer.Option(None, "--warmup", min=0, max=10000, help="Untimed episodes per mode first."),
               serve: Optional[str] = typer.Option(None, "--serve", help="http | direct (local models only)."),
               tasks_dir: Path = typer.Option(Path(layout.TASKS_DIR), "--tasks-dir", help="Where <domain>.jsonl are."),
               image_manifest: Optional[Path] = typer.Option(None, "--image-manifest",
                                                             help="The image stage's manifest (default: the params' tag)."),
               profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile, sets: Optional[list[str]] = Sets,
               log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Run a fixed task list at a fixed concurrency in vanilla and in sandbox mode against ONE model
    endpoint, several times, and report queries per minute per mode (mean, n, 95% interval), their
    ratio and tokens per second. Settings: the params' `throughput` section, overridden by the
    options above; fresh episodes (no journal). Definitions: docs/efficiency.md."""

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    settings = stage.resolve(load_params(profile, params_file, sets), model=model, domains=_csv(domains), tasks=tasks,
                             concurrency=concurrency, repeats=repeats, modes=_csv(modes), warm=warm, warmup=warmup,
                             serve=serve)
    inputs = {"tasks_dir": tasks_dir, **({"image_manifest": image_manifest} if image_manifest is not None else {})}
    res = stage.run(settings, inputs, {"out": out})
    typer.echo(json.dumps(res["summary"], indent=1))

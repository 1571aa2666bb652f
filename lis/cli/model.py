"""``lis model``: models this pipeline does not train (served, API or local folders)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, Verbose
from lis.errors import LisError
from lis.offline.random_model import build_random
from lis.util.log import setup_logging

app = typer.Typer(help="Models this pipeline does not train: record each one's card; random-init models of a "
                       "published shape (rehearsals).", no_args_is_help=True)


@app.command("random")
def random_model(config: Path = typer.Option(..., "--config", help="A Qwen3 configuration: a JSON of "
                                                                   "data/model_configs/ or a model folder."),
                 tokenizer: Path = typer.Option(layout.path(layout.MODEL, model="base"), "--tokenizer",
                                                help="A folder holding the tokenizer (the tiny base's)."),
                 out: Path = typer.Option(..., "--out", help="Folder to write the random-init model into."),
                 seed: int = typer.Option(0, "--seed", min=0, max=2**32 - 1),
                 dtype: str = typer.Option("float32", "--dtype", help="float32 | bfloat16"),
                 log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """A random-init model of a published shape with the offline tokenizer, for paper-scale rehearsals
    (no weights, no hub): memory and kernels are the shape's."""

    setup_logging(log_file, verbose)
    if dtype not in ("float32", "bfloat16"):
        raise LisError(f"--dtype {dtype!r} is not float32 or bfloat16", "use --dtype float32 or --dtype bfloat16")
    manifest = build_random(out, config, tokenizer_dir=tokenizer, seed=seed, dtype=dtype)
    typer.echo(json.dumps(manifest, indent=1))

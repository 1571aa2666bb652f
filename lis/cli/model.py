"""``lis model``: models this pipeline does not train (served, API or local folders)."""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params

app = typer.Typer(help="Models this pipeline does not train: record each one's card.", no_args_is_help=True)
log = logging.getLogger("lis.model")


@app.command("card")
def card(model: str = typer.Option(..., "--model", "-m", help="A models entry listed in jobs.external."),
         out: Path = typer.Option(..., "--out", help="Folder to write card.json into (data/models/<name>)."),
         profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
         log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Record an external model's card (its params entry and what identifies its weights): the
    evaluation of every model depends on data/models/<name>, trained here or carded here."""
    from lis.manifest import write_json
    from lis.models.registry import fingerprint
    from lis.runtime import model_spec
    from lis.util.log import setup_logging

    setup_logging(log_file, verbose)
    p = load_params(profile, params_file)
    spec = model_spec(p, model)
    entry = p.section("models")[model]
    card = {"name": model, "entry": entry, "fingerprint": fingerprint(model, spec), "trained_here": False}
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "card.json", card)
    log.info("model card of %s: %s", model, json.dumps(card["fingerprint"]))

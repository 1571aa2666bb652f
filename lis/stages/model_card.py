"""The ``model_card`` stage: Model card of <name>.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lis.manifest import write_json
from lis.models.registry import fingerprint
from lis.params import Params
from lis.runtime import model_spec
from lis.stages.spec import Option, Stage

STAGE = Stage(
    name="model_card",
    item="name",
    title="Model card of ${item}",
    foreach="${jobs.external}",
    cmd=("lis model card --model ${item} --out data/models/${item} --profile ${profile} --log "
         "logs/models/${item}.log"),
    params=("models",),
    outs=("data/models/${item}",),
)

log = logging.getLogger("lis.model")

ABOUT = """Record an external model's card (its params entry and what identifies its weights): the evaluation of every
model depends on data/models/<name>, trained here or carded here."""
OPTIONS = (Option("--model -m", "A models entry listed in jobs.external.", default=...),)
HELP = {"out": "Folder to write card.json into (data/models/<name>)."}


@dataclass(frozen=True)
class Settings:
    """One run of the stage, the params resolved (:func:`resolve`)."""

    model: str
    """The name of the ``models`` entry."""
    entry: dict
    """The params entry as written (recorded in the card)."""
    spec: dict
    """The entry as the runtime reads it (a local folder given relative made absolute): what the
    weights are identified from."""


def resolve(p: Params, model: str) -> Settings:
    """The settings of the ``models`` entry ``model`` from the params (the profile applied). Raises
    ParamsError for params that cannot be read, LisError naming the entries when there is none called
    ``model``."""

    spec = model_spec(p, model)
    return Settings(model=model, entry=p.settings("models")[model].written(), spec=spec)


def run(settings: Settings, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict[str, Any]:
    """Write the model's card (its params entry and its weights' fingerprint) as ``card.json`` into
    the folder ``outputs["out"]`` (made when missing); return the card. ``inputs`` is empty: a local
    model's folder is the settings' ``spec``."""

    card = {"name": settings.model, "entry": settings.entry, "fingerprint": fingerprint(settings.model, settings.spec),
            "trained_here": False}
    out = outputs["out"]
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "card.json", card)
    log.info("model card of %s: %s", settings.model, json.dumps(card["fingerprint"]))
    return card

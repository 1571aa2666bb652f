"""A ``models`` entry of params → its spec (the dict ``lis.models.registry`` reads) and its ChatModel."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.models.registry import build_model

MODELS_HINT = "add an entry under models: in params.yaml"


def model_spec(params, name: str, *, hint: str = MODELS_HINT) -> dict[str, Any]:
    """The params entry of a model (a copy); a local folder given relative is relative to the project
    root. Raises LisError naming the entries when there is none called ``name`` (``hint``: what to do)."""
    models = params.settings("models")
    if name not in models:
        raise LisError(f"no model named '{name}' in params (models: {', '.join(models) or 'none'})", hint)
    spec = models[name].written()
    for key in ("path", "model"):
        if spec.get("backend") == "local" and spec.get(key) and not Path(spec[key]).is_absolute():
            spec[key] = str(params.root / spec[key])
    return spec


def model_specs(params) -> dict[str, dict[str, Any]]:
    """Every models entry's spec (:func:`model_spec`), by name."""
    return {name: model_spec(params, name) for name in params.settings("models")}


def chat_model(params, name: str):
    """The ChatModel of the models entry ``name`` (:func:`model_spec`, then
    :func:`lis.models.registry.build_model`). Raises LisError / ModelError."""
    return build_model(name, model_spec(params, name))

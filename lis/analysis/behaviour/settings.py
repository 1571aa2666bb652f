"""The behaviour stage's settings: params section ``behaviour`` or a ``--settings`` file, checked by
the section's model (:class:`lis.config.analysis.BehaviourSection`, where the defaults and what
each key means live) and returned as plain values."""
from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from lis.config.analysis import BehaviourSection
from lis.errors import LisError
from lis.params import pydantic_problem

MODES = ("sandbox", "vanilla", "sandbox_inline")


def validate_settings(given: dict[str, Any] | None, source: str = "settings") -> dict[str, Any]:
    """The model's defaults merged with ``given``; a wrong key or type is one line naming it."""
    try:
        s = BehaviourSection.model_validate(dict(given or {}))
    except ValidationError as e:
        raise LisError(f"behaviour {source}: {pydantic_problem(e, '')}",
                       f"allowed: {', '.join(BehaviourSection.model_fields)} (`lis params schema` says what each takes)") from None
    out = s.model_dump()
    out["rl_pairs"] = [{**p, "label": p["label"] or f"{p['before']} → {p['after']}"} for p in out["rl_pairs"]]
    return out

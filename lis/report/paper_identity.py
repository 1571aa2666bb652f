"""Which of the paper's models (and which training) each of our models is, so that the published
numbers go beside ours only where the same model and setting were run.

Decided from the artifacts, not from names alone: an external model is the paper's when its name or
hub id is one of the paper's names or aliases; the trained chain follows the manifests (a hub
``base``, an ``sft`` that trained 0 steps, a GRPO run of sandbox or vanilla mode from the paper's base
model). The offline tiny model is nobody's.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lis.report.paper_numbers import load

# our GRPO data variants → the paper's Table 7 training_data keys
DATA_VARIANTS = {"files": "general_files", "prompt": "general_prompt", "math": "math"}


@dataclass(frozen=True)
class Identity:
    paper_model: str            # id in paper_numbers.yaml (models:)
    training: str               # base | llm_rl | sandbox_rl
    data: str | None = None     # Table 7's training_data for a GRPO run
    how: str = ""               # one line: why we believe it

    @property
    def name(self) -> str:
        return load().data["models"][self.paper_model]["name"]


def paper_model_id(name: Any) -> str | None:
    """The paper's model id a name or alias stands for, or None."""
    if not name:
        return None
    pn = load()
    cid = pn.canonical("model", str(name))
    return cid if cid in pn.data["models"] and cid not in ("average", "any", "all", "strong", "weak") else None


def identify(manifests: dict[str, dict[str, Any]], entries: dict[str, dict[str, Any]]) -> dict[str, Identity]:
    """Identity of every model whose manifest (or card) is given; models that are none of the
    paper's are left out. ``entries``: the params' models section."""
    out: dict[str, Identity] = {}

    def of(name: str, depth: int = 0) -> Identity | None:
        if name in out:
            return out[name]
        m = manifests.get(name)
        if m is None or depth > 8:
            return None
        ident = None
        if "fingerprint" in m or m.get("trained_here") is False:   # an external model's card
            entry = m.get("entry") or entries.get(name) or {}
            for cand in (name, entry.get("model")):
                pid = paper_model_id(cand)
                if pid:
                    ident = Identity(pid, "base", how=f"external model {cand!r}")
                    break
        elif m.get("kind") == "base":
            if m.get("source") == "hub":
                pid = paper_model_id(m.get("model"))
                if pid:
                    ident = Identity(pid, "base", how=f"base downloaded from the hub: {m.get('model')}")
        elif m.get("kind") == "sft":
            if int(m.get("steps_done") or 0) == 0:
                parent = of(Path(str(m.get("base") or "")).name, depth + 1)
                if parent and parent.training == "base":
                    ident = Identity(parent.paper_model, "base", how=f"SFT of 0 steps: a copy of {parent.how}")
        elif m.get("kind") == "grpo":
            parent = of(Path(str(m.get("init") or "")).name, depth + 1)
            if parent and parent.training == "base":
                training = "sandbox_rl" if m.get("mode", "sandbox") != "vanilla" else "llm_rl"
                variant = Path(str(m.get("data") or "")).stem
                ident = Identity(parent.paper_model, training,
                                 DATA_VARIANTS.get(variant) if training == "sandbox_rl" else None,
                                 how=f"GRPO ({m.get('mode', 'sandbox')} mode, data {variant}) from {parent.how}")
        if ident:
            out[name] = ident
        return ident

    for name in manifests:
        of(name)
    return out

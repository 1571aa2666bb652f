"""The behaviour stage's settings (proposed params section ``behaviour``), with defaults.

    groups:            {}        Table 4: group name -> models, e.g. {strong: [a, b], weak: [qwen3-4b]}
    rl_pairs:          []        Tables 8 and 9: [{before: base, after: grpo-files, label: "4B"}]
    tool_mode:         sandbox   the mode whose tool use makes Figure 2 and Tables 4 and 8
    modes:             [sandbox, vanilla]   what --jobs reads per model and domain
    figure2_models:    null      models averaged in Figure 2's per-domain rows (null: all)
    replicates:        2000      bootstrap replicates
    seed:              0         bootstrap seed
    cluster:           episode   bootstrap unit: episode | task (a task's repeats resampled together)
    include_reasoning: false     Table 9 also counts the reasoning channel of thinking models
"""
from __future__ import annotations

import copy
from typing import Any

from lis.errors import LisError

DEFAULTS: dict[str, Any] = {
    "groups": {},
    "rl_pairs": [],
    "tool_mode": "sandbox",
    "modes": ["sandbox", "vanilla"],
    "figure2_models": None,
    "replicates": 2000,
    "seed": 0,
    "cluster": "episode",
    "include_reasoning": False,
}
MODES = ("sandbox", "vanilla", "sandbox_inline")


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise LisError(f"behaviour settings: {where} must be a list of model names, got {value!r}"[:200],
                       "e.g. [base, grpo-files]")
    return list(value)


def validate_settings(given: dict[str, Any] | None, source: str = "settings") -> dict[str, Any]:
    """Defaults merged with ``given``; a wrong key or type is a one-line error naming it."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise LisError(f"behaviour {source}: unknown key(s) {', '.join(unknown)}", f"allowed: {', '.join(DEFAULTS)}")
    s = copy.deepcopy(DEFAULTS)
    s.update(given)
    if not isinstance(s["groups"], dict):
        raise LisError(f"behaviour {source}: groups must map a group name to model names", "e.g. {strong: [a, b]}")
    s["groups"] = {str(k): _names(v, f"groups.{k}") for k, v in s["groups"].items()}
    pairs = s["rl_pairs"]
    if not isinstance(pairs, list):
        raise LisError(f"behaviour {source}: rl_pairs must be a list of {{before, after}}", "e.g. [{before: base, after: grpo-files}]")
    out = []
    for i, p in enumerate(pairs):
        if not isinstance(p, dict) or not isinstance(p.get("before"), str) or not isinstance(p.get("after"), str) \
                or set(p) - {"before", "after", "label"}:
            raise LisError(f"behaviour {source}: rl_pairs[{i}] must be {{before: <model>, after: <model>, label?}}, "
                           f"got {p!r}"[:200], "e.g. {before: base, after: grpo-files}")
        out.append({"before": p["before"], "after": p["after"], "label": str(p.get("label") or f"{p['before']} → {p['after']}")})
    s["rl_pairs"] = out
    if s["tool_mode"] not in MODES:
        raise LisError(f"behaviour {source}: tool_mode must be one of {', '.join(MODES)}, got {s['tool_mode']!r}",
                       "sandbox is the paper's")
    if not isinstance(s["modes"], list) or not s["modes"] or any(m not in MODES for m in s["modes"]):
        raise LisError(f"behaviour {source}: modes must be a non-empty list of {', '.join(MODES)}, got {s['modes']!r}",
                       "e.g. [sandbox, vanilla]")
    if s["figure2_models"] is not None:
        s["figure2_models"] = _names(s["figure2_models"], "figure2_models")
    for key, lo in (("replicates", 100), ("seed", 0)):
        if not isinstance(s[key], int) or isinstance(s[key], bool) or s[key] < lo:
            raise LisError(f"behaviour {source}: {key} must be an integer >= {lo}, got {s[key]!r}", f"default {DEFAULTS[key]}")
    if s["cluster"] not in ("episode", "task"):
        raise LisError(f"behaviour {source}: cluster must be episode or task, got {s['cluster']!r}", "default episode")
    if not isinstance(s["include_reasoning"], bool):
        raise LisError(f"behaviour {source}: include_reasoning must be true or false", "default false")
    return s

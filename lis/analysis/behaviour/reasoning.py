"""Table 9: reasoning patterns in vanilla-mode answers (verification phrases, structure markers).

    counts = count_patterns("## Plan\\n- step\\nLet's verify: ok")
    # {'lets_verify': 1, 'check_that': 0, ..., 'headers': 1, 'list_items': 1, ...,
    #  'headers_separators': 1, 'lists_math_blocks': 1}

Each row counts regex matches in the answer's text (with the reasoning channel when
``include_reasoning``). Structure rows count outside ``` code fences, so a ``#`` comment in code is
not a header; the combined rows are sums of their parts (patterns.yaml).
"""
from __future__ import annotations

import re

from lis.agent.trajectory import Trajectory
from lis.analysis.behaviour.rules import Rules, load_rules

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})[^\n]*\n.*?(?:^\s*\1[^\n]*$|\Z)", re.M | re.S)


def strip_code_fences(text: str) -> str:
    return _FENCE.sub("", text)


def count_patterns(text: str, rules: Rules | None = None) -> dict[str, int]:
    rules = rules or load_rules()
    prose = strip_code_fences(text)
    counts = {row.id: len(row.regex.findall(prose if row.structure else text)) for row in rules.reasoning}
    for name, parts in rules.combined.items():
        counts[name] = sum(counts[p] for p in parts)
    return counts


def response_text(rec: Trajectory, include_reasoning: bool = False) -> str:
    parts = []
    for s in rec.steps:
        if include_reasoning and s.reasoning:
            parts.append(s.reasoning)
        if s.content:
            parts.append(s.content)
    return "\n".join(parts)


def row_ids(rules: Rules) -> tuple[str, ...]:
    """Table 9's rows in order: each pattern, then the combined rows."""
    return tuple(r.id for r in rules.reasoning) + tuple(rules.combined)

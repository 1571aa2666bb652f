"""Distractor files for single-document contexts: documents of other contexts that do not give the answer away.

A candidate is refused when it mentions what the question is about or what answers it: the
gold text of a free-form answer, the text of a correct option, and the entities and values the
question needs (generated contexts). Only strings of three or more characters are looked for
(whole words, any case), and not yes/no/true/false/none: a ``3`` or a ``yes`` in another
document gives nothing away.
"""
from __future__ import annotations

import random
import re

from lis.context_tasks.records import QA, Document

_TRIVIAL = {"yes", "no", "true", "false", "none"}


def giveaways(qa: QA) -> list[str]:
    """The strings a distractor must not contain for ``qa``."""
    found = [qa.answer] if qa.kind == "free_form" else qa.correct_options()
    for fact in qa.needs.get("inputs", []):
        found += [fact.get("entity", ""), fact.get("value", "")]
    return [s.strip() for s in dict.fromkeys(found) if len(s.strip()) >= 3 and s.strip().lower() not in _TRIVIAL]


def leaks(text: str, strings: list[str]) -> bool:
    """Whether ``text`` contains one of ``strings`` as a whole word or phrase (any case)."""
    low = text.lower()
    for s in strings:
        if s.lower() in low and re.search(r"(?<!\w)" + re.escape(s) + r"(?!\w)", text, re.IGNORECASE):
            return True
    return False


def pick_distractors(pool: list[tuple[str, Document]], context_id: str, qa: QA, n: int,
                     rng: random.Random) -> list[tuple[str, Document]]:
    """Up to ``n`` documents of ``pool`` (``(context id, document)``) from other contexts that do
    not leak ``qa``'s answer; fewer when the pool has no more such documents."""
    if n <= 0 or not pool:
        return []
    avoid = giveaways(qa)
    out: list[tuple[str, Document]] = []
    tried: set[int] = set()
    while len(out) < n and len(tried) < len(pool):
        i = rng.randrange(len(pool))
        if i in tried:
            if len(tried) > 0.8 * len(pool):  # nearly exhausted: walk the rest in order
                i = next((j for j in range(len(pool)) if j not in tried), None)
                if i is None:
                    break
            else:
                continue
        tried.add(i)
        cid, doc = pool[i]
        if cid != context_id and not leaks(doc.text, avoid):
            out.append((cid, doc))
    return out

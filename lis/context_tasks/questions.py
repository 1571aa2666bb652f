"""Questions about generated entities: a lookup or a computation, asked free-form or as a choice.

Lookups ask for one value that appears verbatim in one document. Computations need one or
more values and a little arithmetic: years since a reference year, a value plus an increment
(one entity); a difference, sum, ratio, count below a threshold or the largest (across the
documents of a multi-document context). Each question's ``needs`` names the facts read, the
operation and a Python expression over the values read (``expr``) whose printed result is the
answer (choice questions: the option it selects), which is how the gold is computed here and
how the scripted teacher computes it in the sandbox.
"""
from __future__ import annotations

import random

from lis.context_tasks.entities import Attr, Entity, Kind, draw_value, place_name
from lis.context_tasks.records import FREE, LETTERS, MULTIPLE, QA, SINGLE

N_OPTIONS = 4
MULTI_QUESTION = "Which of the following statements are supported by the documents? More than one option may be correct."


def _eval(expr: str) -> str:
    return str(eval(expr, {"__builtins__": {"round": round, "sum": sum, "max": max, "min": min}}))  # noqa: S307


def _numeric(kind: Kind) -> list[Attr]:
    return [a for a in kind.attrs if a.numeric]


def _counts(kind: Kind) -> list[Attr]:
    return [a for a in kind.attrs if a.kind == "count"]


# -- what is asked: (question, answer, needs) ----------------------------------------------------
def lookup(ents: list[Entity], rng: random.Random) -> tuple[str, str, dict]:
    e = rng.choice(ents)
    attr = rng.choice(e.kind.attrs)
    return (attr.question.format(name=e.name), e.values[attr.key],
            {"op": "lookup", "inputs": [e.fact(attr.key)], "attribute": attr.key})


def computation(ents: list[Entity], rng: random.Random) -> tuple[str, str, dict] | None:
    """A computation over one entity, or over two or more when the context has several."""
    kind = ents[0].kind
    ops = ["since", "add"] + (["difference", "sum", "ratio", "count", "largest"] * 2 if len(ents) >= 2 else [])
    op = rng.choice(ops)
    if op in ("since", "add"):
        e = rng.choice(ents)
        attr = rng.choice([a for a in _numeric(kind) if (a.kind == "year") == (op == "since")])
        v = int(e.values[attr.key])
        if op == "since":
            ref = rng.randint(v + 3, max(v + 4, 2030))
            q = f"How many years lie between the {attr.phrase} of {_the(e)} and the year {ref}?"
            expr = f"{ref} - {v}"
        else:
            d = rng.randint(2, max(3, v // 4))
            q = f"If the {attr.phrase} of {_the(e)} grew by {d}, what would it be?"
            expr = f"{v} + {d}"
        return q, _eval(expr), {"op": op, "inputs": [e.fact(attr.key)], "attribute": attr.key, "expr": expr}
    attrs = _counts(kind) if op in ("sum", "ratio") else _numeric(kind)
    attr = rng.choice(attrs)
    if op in ("difference", "sum", "ratio"):
        a, b = rng.sample(ents, 2)
        va, vb = int(a.values[attr.key]), int(b.values[attr.key])
        if va == vb:
            return None
        if va < vb:
            a, b, va, vb = b, a, vb, va
        if op == "difference":
            q, expr = f"By how much does the {attr.phrase} of {_the(a)} exceed that of {_the(b)}?", f"{va} - {vb}"
        elif op == "sum":
            q, expr = f"What is the combined {attr.phrase} of {_the(a)} and {_the(b)}?", f"{va} + {vb}"
        else:
            q = (f"What is the {attr.phrase} of {_the(a)} divided by the {attr.phrase} of {_the(b)}, rounded to one "
                 "decimal place?")
            expr = f"round({va} / {vb}, 1)"
        return q, _eval(expr), {"op": op, "inputs": [a.fact(attr.key), b.fact(attr.key)], "attribute": attr.key,
                                "expr": expr}
    values = [int(e.values[attr.key]) for e in ents]
    if op == "count":
        t = _threshold(values, rng)
        if t is None:
            return None
        q = f"How many of the {kind.plural} described in the documents have a {attr.phrase} below {t}?"
        expr = f"sum(1 for v in [{', '.join(map(str, values))}] if v < {t})"
        return q, _eval(expr), {"op": op, "inputs": [e.fact(attr.key) for e in ents], "attribute": attr.key,
                                "threshold": t, "expr": expr}
    if len(set(values)) < len(values):
        return None
    q = f"Which of the {kind.plural} described in the documents has the highest {attr.phrase}?"
    pairs = ", ".join(f'"{e.name}": {v}' for e, v in zip(ents, values))
    expr = f"max({{{pairs}}}.items(), key=lambda kv: kv[1])[0]"
    return q, max(zip(values, (e.name for e in ents)))[1], {"op": "largest", "inputs": [e.fact(attr.key) for e in ents],
                                                            "attribute": attr.key, "expr": expr}


def _the(e: Entity) -> str:
    return {"ship": f"the {e.name}", "library": f"{e.name} Library"}.get(e.kind.noun, e.name)


def _threshold(values: list[int], rng: random.Random) -> int | None:
    """A threshold strictly inside the values' range that equals none of them."""
    lo, hi = min(values), max(values)
    free = [t for t in range(lo + 1, hi + 1) if t not in values] if hi - lo < 5000 else None
    if free is not None:
        return rng.choice(free) if free else None
    while True:
        t = rng.randint(lo + 1, hi)
        if t not in values:
            return t


# -- how it is asked -----------------------------------------------------------------------------
def wrong_values(gold: str, attr: Attr | None, others: list[str], rng: random.Random, n: int) -> list[str]:
    """``n`` distinct wrong option texts of the gold's kind: other entities' values first, then
    nearby numbers (numeric gold) or fresh names."""
    out: list[str] = []
    pool = [o for o in dict.fromkeys(others) if o != gold]
    rng.shuffle(pool)
    out += pool[:n]
    tries = 0
    while len(out) < n and tries < 1000:
        tries += 1
        if _is_number(gold):
            g = float(gold)
            step = max(1.0, abs(g) * 0.15)
            cand = g + rng.choice((-1, 1)) * rng.uniform(1, step)
            text = str(round(cand, 1)) if "." in gold else str(int(round(cand)))
            if text.startswith("-") or (attr is not None and attr.numeric and not attr.low <= float(text) <= attr.high):
                continue
        else:
            text = draw_value(attr, rng) if attr is not None else place_name(rng)
        if text != gold and text not in out:
            out.append(text)
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def as_single_choice(q: str, gold: str, wrong: list[str], needs: dict, rng: random.Random) -> QA:
    options = [gold, *wrong]
    rng.shuffle(options)
    return QA(q, LETTERS[options.index(gold)], SINGLE, options, needs)


def statements(ents: list[Entity], rng: random.Random) -> QA:
    """A multiple-answer question: four statements (one attribute across entities, or several
    attributes of one entity), two or three of them true; a false one states a wrong value."""
    kind = ents[0].kind
    if len(ents) >= 2:
        attr = rng.choice(kind.attrs)
        picks = [(e, attr.key) for e in rng.sample(ents, min(N_OPTIONS, len(ents)))]
        while len(picks) < N_OPTIONS:  # fewer entities than options: more attributes of theirs
            e, a = rng.choice(ents), rng.choice(kind.attrs)
            if (e, a.key) not in picks:
                picks.append((e, a.key))
    else:
        picks = [(ents[0], a.key) for a in rng.sample(list(kind.attrs), N_OPTIONS)]
    n_true = rng.choice((2, 3))
    truth = [True] * n_true + [False] * (N_OPTIONS - n_true)
    rng.shuffle(truth)
    options, inputs = [], []
    for (e, key), true in zip(picks, truth):
        value = e.values[key]
        if not true:
            others = [x.values[key] for x in ents if x is not e]
            value = wrong_values(value, kind.attr(key), others, rng, 1)[0]
        options.append(e.sentence(key, value))
        inputs.append(e.fact(key))
    gold = ", ".join(LETTERS[i] for i, t in enumerate(truth) if t)
    return QA(MULTI_QUESTION, gold, MULTIPLE, options,
              {"op": "statements", "inputs": inputs, "truth": truth})


def below_threshold(ents: list[Entity], rng: random.Random) -> QA | None:
    """A multiple-answer computation: which entities have a value below a threshold."""
    kind = ents[0].kind
    if len(ents) < 3:
        return None
    attr = rng.choice([a for a in kind.attrs if a.numeric])
    chosen = rng.sample(ents, min(N_OPTIONS, len(ents)))
    values = [int(e.values[attr.key]) for e in chosen]
    for _ in range(20):
        t = _threshold(values, rng)
        if t is not None and 2 <= sum(v < t for v in values) <= len(values) - 1:
            break
    else:
        return None
    gold = ", ".join(LETTERS[i] for i, v in enumerate(values) if v < t)
    pairs = ", ".join(f'"{LETTERS[i]}": {v}' for i, v in enumerate(values))
    expr = f'", ".join(k for k, v in {{{pairs}}}.items() if v < {t})'
    assert _eval(expr) == gold
    q = (f"Which of the following {kind.plural} have a {attr.phrase} below {t}? More than one option may be correct.")
    return QA(q, gold, MULTIPLE, [_the(e) if kind.noun == "library" else e.name for e in chosen],
              {"op": "below", "inputs": [e.fact(attr.key) for e in chosen], "attribute": attr.key, "threshold": t,
               "expr": expr})


def make_qa(ents: list[Entity], qa_kind: str, compute: bool, rng: random.Random) -> QA | None:
    """One question of ``qa_kind`` about ``ents`` (None when this draw does not fit the context)."""
    if qa_kind == MULTIPLE:
        return (below_threshold(ents, rng) if compute else None) or statements(ents, rng)
    asked = computation(ents, rng) if compute else lookup(ents, rng)
    if asked is None:
        return None
    q, gold, needs = asked
    if qa_kind == FREE:
        return QA(q, gold, FREE, [], needs)
    kind = ents[0].kind
    attr = kind.attr(needs["attribute"]) if needs["op"] == "lookup" else None
    if needs["op"] == "largest":
        others = [e.name for e in ents]
    elif needs["op"] == "lookup":
        others = [e.values[attr.key] for e in ents]
    else:
        others = []
    wrong = wrong_values(gold, attr, others, rng, N_OPTIONS - 1)
    if len(wrong) < N_OPTIONS - 1:
        return None
    return as_single_choice(q, gold, wrong, needs, rng)

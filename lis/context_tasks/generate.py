"""The offline source: seeded fictional contexts with questions (the embedded default and tests).

A context is a collection of entities of one kind (towns, companies, ships, libraries of an
invented region), one document per entity: a title, then its fact sentences among filler
sentences. ``documents_per_context`` 1 gives single-document contexts (they get distractor files
at construction); more gives multi-document ones. The knobs (:mod:`lis.context_tasks.settings`)
decide how hard the tasks are: few short files, lookups whose answer is a number or a name in
the file named after the entity (easy), up to many files with neutral names, facts anywhere in
the file and computations across files (hard). Same settings → same contexts; a larger
``contexts`` keeps the earlier ones.
"""
from __future__ import annotations

import random

from lis.context_tasks.entities import KINDS, Entity, draw_value, filler, place_name, region_name
from lis.context_tasks.questions import make_qa
from lis.context_tasks.records import KINDS as QA_KINDS
from lis.context_tasks.records import Context, Document
from lis.config.tasks import ContextSection
from lis.context_tasks.settings import entity_kinds, span


class _Names:
    """Invented names never used twice (entities and place values), so a name identifies one entity."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def new(self, rng: random.Random) -> str:
        while True:
            name = place_name(rng)
            if name not in self.used:
                self.used.add(name)
                return name


def _layout(facts: list[str], fill: list[str], position: str, rng: random.Random) -> list[str]:
    """Fact sentences placed among filler sentences: first, in the middle, last, or each anywhere."""
    if position == "random":
        position = rng.choice(("start", "middle", "end", "spread"))
    if position == "start":
        return facts + fill
    if position == "end":
        return fill + facts
    if position == "middle":
        half = len(fill) // 2
        return fill[:half] + facts + fill[half:]
    body = list(fill)
    for f in facts:
        body.insert(rng.randint(0, len(body)), f)
    return body


def _document(e: Entity, s: ContextSection, rng: random.Random) -> Document:
    facts = [e.sentence(a.key) for a in e.kind.attrs]
    rng.shuffle(facts)
    fill = filler(e.kind, e.name, rng, rng.randint(*span(s.filler_lines)))
    title = {"ship": f"The {e.name}", "library": f"{e.name} Library"}.get(e.kind.noun, e.name)
    lines = [f"# {title}", ""] + _layout(facts, fill, s.answer_position, rng)
    return Document(e.name, "\n".join(lines) + "\n")


def _entity(kind_name: str, names: _Names, rng: random.Random) -> Entity:
    kind = KINDS[kind_name]
    values = {a.key: names.new(rng) if a.kind == "place" else draw_value(a, rng) for a in kind.attrs}
    return Entity(kind, names.new(rng), values)


def generate_context(i: int, s: ContextSection, rng: random.Random, names: _Names) -> Context:
    kind_name = rng.choice(entity_kinds(s) or sorted(KINDS))
    ents = [_entity(kind_name, names, rng) for _ in range(rng.randint(*span(s.documents_per_context)))]
    region = region_name(rng)
    docs = [_document(e, s, rng) for e in ents]
    mix = s.qa_mix.model_dump()
    kinds = [k for k in QA_KINDS if mix.get(k, 0) > 0]
    weights = [mix[k] for k in kinds]
    qas, seen = [], set()
    want = rng.randint(*span(s.questions_per_context))
    for _ in range(want * 20):
        if len(qas) >= want:
            break
        qa = make_qa(ents, rng.choices(kinds, weights)[0], rng.random() < s.compute_share, rng)
        if qa is None:
            continue
        key = (qa.question, tuple(qa.options))
        if key in seen:
            continue
        seen.add(key)
        qas.append(qa)
    return Context(id=f"gen-{s.seed}-{i:05d}", source="generated", documents=docs, qas=qas,
                   meta={"kind": kind_name, "collection": KINDS[kind_name].collection.format(region=region),
                         "entities": [e.name for e in ents]})


def generate_contexts(s: ContextSection) -> list[Context]:
    """``s.contexts`` fictional contexts, each with ``questions_per_context`` QA pairs."""
    rng = random.Random(f"lis.data.context.generate:{s.seed}")
    names = _Names()
    return [generate_context(i, s, rng, names) for i in range(s.contexts)]

"""Where context tasks come from, and their two splits (``tasks.context.source``).

``generated``  the offline generator (:mod:`lis.context_tasks.generate`): the embedded default;
``seed``       the raw Instruction Pre-Training seed rows, constructed here
               (:mod:`lis.context_tasks.seed_collection`, then :mod:`lis.context_tasks.construct`);
``paper``      the authors' constructed set, ``daixuancheng/llm-in-sandbox-rl`` config
               ``instruct_pretrain`` at ``paper_revision``, read through ``lis.tasks.load_hub``
               (split by shared documents, :func:`lis.context_tasks.splits.split_tasks`).

:func:`build_splits` gives the train and held-out tasks of the ``files`` variant;
``lis context-tasks`` writes the train split's variants, ``lis tasks --domain instruct_pretrain``
(source ``generated``) the held-out split.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lis.context_tasks.construct import construct_tasks
from lis.context_tasks.generate import generate_contexts
from lis.context_tasks.seed_collection import load_seed_contexts
from lis.config.tasks import ContextSection
from lis.context_tasks.settings import construction_knobs, settings_from
from lis.context_tasks.splits import split_contexts, split_tasks
from lis.errors import LisError
from lis.tasks import load_hub
from lis.tasks.hub_access import recording_commits
from lis.tasks.instruct_pretrain import PAPER_DATASET, TRAIN_CONFIG
from lis.tasks.schema import Task


@dataclass
class Splits:
    """The ``files``-variant tasks of both splits and what produced them."""
    train: list[Task]
    held_out: list[Task]
    facts: dict[str, Any] = field(default_factory=dict)


def _contexts(s: ContextSection, root: Path):
    if s.source == "generated":
        return generate_contexts(s), {"generator": "lis.context_tasks.generate"}
    sc = s.seed_collection
    return load_seed_contexts(sc, root, s.seed), {"seed_collection": {"dataset": None if sc.path else sc.dataset,
                                                                      "configs": None if sc.path else list(sc.configs),
                                                                      "revision": sc.revision, "path": sc.path}}


def build_splits(s: ContextSection, root: Path) -> Splits:
    """Train and held-out tasks from ``s.source`` (disjoint by context). Raises LisError when the
    source cannot be read (an unreachable hub names the dataset and the offline way out)."""
    if s.source == "paper":
        with recording_commits() as commits:
            tasks = load_hub("instruct_pretrain", s.paper_revision, config=TRAIN_CONFIG)
        for t in tasks:
            t.meta.update(variant="files", source=t.meta.get("source", "paper"))
        train, held = split_tasks(tasks, s.held_out_contexts, s.seed, "paper")
        return Splits(train, held, {"dataset": PAPER_DATASET, "config": TRAIN_CONFIG, "revision": s.paper_revision,
                                    "commits": dict(commits), "contexts": None})
    contexts, facts = _contexts(s, root)
    train_ctx, held_ctx = split_contexts(contexts, s.held_out_contexts, s.seed)
    facts["contexts"] = {"train": len(train_ctx), "held_out": len(held_ctx)}
    return Splits(construct_tasks(train_ctx, s, "train"), construct_tasks(held_ctx, s, "held_out"), facts)


def qa_mix(tasks: list[Task]) -> dict[str, int]:
    """How many tasks of each question kind (``meta.question_kind``, else the qa_type)."""
    return dict(sorted(Counter(str(t.meta.get("question_kind") or t.qa_type) for t in tasks).items()))


def held_out_tasks(sec: dict[str, Any] | None, root: Path) -> tuple[list[Task], dict[str, Any]]:
    """The held-out context tasks that the ``tasks.context`` params ``sec`` build (the evaluation set
    of ``lis tasks -d instruct_pretrain --source generated`` and of Inspect's ``lis/held_out_context``),
    and what a manifest says of them. Raises LisError when the split is empty or cannot be built."""
    s = settings_from(sec)
    splits = build_splits(s, root)
    if not splits.held_out:
        raise LisError("the held-out split of the context tasks is empty", "raise tasks.context.held_out_contexts above 0")
    return splits.held_out, {"split": "held_out", "context_source": s.source, "context_seed": s.seed,
                             "knobs": construction_knobs(s), "contexts": splits.facts.get("contexts"),
                             "source_facts": {k: v for k, v in splits.facts.items() if k != "contexts"},
                             "qa_mix": qa_mix(splits.held_out), "revision": None}

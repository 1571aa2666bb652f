"""Train and held-out splits, disjoint by context: no context (and no document of one) in both.

Contexts are split before construction, and distractors are drawn within a split, so a held-out
task shares no document with any training task. Tasks that come already constructed (the
paper's set) carry no context id: tasks sharing a document text are taken to share a context
(connected components), and whole components are split.
"""
from __future__ import annotations

import hashlib
import random

from lis.context_tasks.records import Context
from lis.errors import LisError
from lis.tasks.schema import Task


def split_contexts(contexts: list[Context], held_out: int, seed: int) -> tuple[list[Context], list[Context]]:
    """(train, held-out): ``held_out`` contexts drawn with ``seed``; both keep the contexts' order."""
    if held_out >= len(contexts) and contexts:
        raise LisError(f"{held_out} held-out contexts leave none of the {len(contexts)} contexts for training",
                       "lower tasks.context.held_out_contexts or raise tasks.context.contexts")
    out = set(random.Random(f"lis.data.context.split:{seed}").sample(range(len(contexts)), held_out))
    return ([c for i, c in enumerate(contexts) if i not in out], [c for i, c in enumerate(contexts) if i in out])


def context_groups(tasks: list[Task]) -> list[list[Task]]:
    """Tasks grouped so that two tasks sharing a document text are in one group (first-seen order)."""
    parent = list(range(len(tasks)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, t in enumerate(tasks):
        for text in t.input_files.values():
            h = hashlib.sha256(text.encode()).hexdigest()
            if h in owner:
                parent[find(i)] = find(owner[h])
            else:
                owner[h] = i
    groups: dict[int, list[Task]] = {}
    for i, t in enumerate(tasks):
        groups.setdefault(find(i), []).append(t)
    return list(groups.values())


def split_tasks(tasks: list[Task], held_out: int, seed: int, source: str) -> tuple[list[Task], list[Task]]:
    """(train, held-out) of already-constructed ``tasks``: ``held_out`` whole groups
    (:func:`context_groups`) held out; each task's meta gets ``context_id`` and ``split``."""
    groups = context_groups(tasks)
    if held_out and held_out >= len(groups):
        raise LisError(f"{source}: its {len(tasks)} tasks form {len(groups)} context group(s) (tasks sharing a "
                       f"document); {held_out} held-out contexts leave none for training",
                       "lower tasks.context.held_out_contexts")
    out = set(random.Random(f"lis.data.context.split:{seed}").sample(range(len(groups)), held_out))
    train, held = [], []
    for gi, group in enumerate(groups):
        split = "held_out" if gi in out else "train"
        cid = f"{source}-{gi:05d}"
        for t in group:
            t.meta.setdefault("context_id", cid)
            t.meta["split"] = split
            (held if split == "held_out" else train).append(t)
    return train, held

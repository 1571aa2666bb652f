"""The training-data variants of the paper's data ablation (Table 7), chosen by params alone.

``files``   the context tasks as built: documents as files in ``/testbed/documents`` (the default,
            LLM-in-Sandbox-RL);
``prompt``  the same tasks with the documents in the prompt instead: ``meta["mode"]`` is
            ``sandbox_inline``, the prompt mode that shows ``input_files`` inline (``BEGIN
            DOCUMENT i:`` blocks, :mod:`lis.prompts.documents`) and places no file;
``math``    generated math problems, no documents (:mod:`lis.context_tasks.math_tasks`).

:func:`episode_mode` is the prompt mode a training episode of a task runs in.
"""
from __future__ import annotations

import copy

from lis.context_tasks.math_tasks import math_tasks
from lis.tasks.schema import Task

VARIANTS = ("files", "prompt", "math")
INLINE_MODE = "sandbox_inline"


def episode_mode(task: Task) -> str:
    """``sandbox_inline`` for a prompt-variant task, else ``sandbox``."""
    return str(task.meta.get("mode") or "sandbox")


def prompt_variant(tasks: list[Task]) -> list[Task]:
    """Copies of ``tasks`` that show their documents in the prompt (mode ``sandbox_inline``)."""
    out = []
    for t in tasks:
        c = copy.deepcopy(t)
        c.meta["variant"] = "prompt"
        c.meta["mode"] = INLINE_MODE
        out.append(c)
    return out


def variants(files_tasks: list[Task], seed: int, math_n: int | None = None) -> dict[str, list[Task]]:
    """The three training sets built from one split's ``files_tasks``; ``math_n`` problems (None:
    as many as there are files tasks)."""
    n = len(files_tasks) if math_n is None else math_n
    return {"files": files_tasks, "prompt": prompt_variant(files_tasks), "math": math_tasks(max(1, n), seed)}

"""Context tasks for LLM-in-Sandbox-RL: contexts with QA pairs → tasks with documents as files.

Built here (stage ``lis context-tasks``); the task record and the benchmark task sets live in :mod:`lis.tasks`.
The package was once ``lis.data.context``: its random streams keep that name
(``Random("lis.data.context.…")``) so that the tasks built are byte-identical to before.

    from lis.context_tasks import settings_from, build_splits, variants
    s = settings_from(params.settings("tasks").written()["context"])
    splits = build_splits(s, root)                     # files variant, train and held-out
    sets = variants(splits.train, s.seed, s.math_tasks)  # {"files", "prompt", "math"}
"""
from lis.context_tasks.construct import construct_task, construct_tasks
from lis.context_tasks.generate import generate_contexts
from lis.context_tasks.math_tasks import math_tasks
from lis.context_tasks.records import FREE, MULTIPLE, QA, SINGLE, Context, Document
from lis.context_tasks.seed_collection import load_seed_contexts, parse_qa, parse_row
from lis.context_tasks.settings import construction_knobs, knobs, settings_from, span
from lis.context_tasks.sources import Splits, build_splits, held_out_tasks, qa_mix
from lis.context_tasks.splits import context_groups, split_contexts, split_tasks
from lis.context_tasks.variants import INLINE_MODE, VARIANTS, episode_mode, prompt_variant, variants

__all__ = ["FREE", "INLINE_MODE", "MULTIPLE", "QA", "SINGLE", "VARIANTS", "Context", "Document", "Splits",
           "build_splits", "construct_task", "construct_tasks", "construction_knobs", "context_groups", "episode_mode",
           "generate_contexts", "held_out_tasks", "knobs", "load_seed_contexts", "math_tasks", "parse_qa", "parse_row",
           "prompt_variant", "qa_mix", "settings_from", "span", "split_contexts", "split_tasks", "variants"]

"""Context tasks for LLM-in-Sandbox-RL: contexts with QA pairs → tasks with documents as files.

    from lis.data.context import settings_from, build_splits, variants
    s = settings_from(params.section("tasks")["context"])
    splits = build_splits(s, root)                     # files variant, train and held-out
    sets = variants(splits.train, s.seed, s.math_tasks)  # {"files", "prompt", "math"}
"""
from lis.data.context.construct import construct_task, construct_tasks
from lis.data.context.generate import generate_contexts
from lis.data.context.math_tasks import math_tasks
from lis.data.context.records import FREE, MULTIPLE, QA, SINGLE, Context, Document
from lis.data.context.seed_collection import load_seed_contexts, parse_qa, parse_row
from lis.data.context.settings import ContextSettings, SeedCollection, settings_from
from lis.data.context.sources import Splits, build_splits, qa_mix
from lis.data.context.splits import context_groups, split_contexts, split_tasks
from lis.data.context.variants import INLINE_MODE, VARIANTS, episode_mode, prompt_variant, variants

__all__ = ["FREE", "INLINE_MODE", "MULTIPLE", "QA", "SINGLE", "VARIANTS", "Context", "ContextSettings", "Document",
           "SeedCollection", "Splits", "build_splits", "construct_task", "construct_tasks", "context_groups",
           "episode_mode", "generate_contexts", "load_seed_contexts", "math_tasks", "parse_qa", "parse_row",
           "prompt_variant", "qa_mix", "settings_from", "split_contexts", "split_tasks", "variants"]

"""Training data built here: the context tasks of LLM-in-Sandbox-RL (:mod:`lis.data.context`).

    from lis.data import settings_from, build_splits, variants, episode_mode
"""
from lis.data.context import (FREE, INLINE_MODE, MULTIPLE, QA, SINGLE, VARIANTS, Context, ContextSettings, Document,
                              SeedCollection, Splits, build_splits, construct_task, construct_tasks, context_groups,
                              episode_mode, generate_contexts, load_seed_contexts, math_tasks, parse_qa, parse_row,
                              prompt_variant, qa_mix, settings_from, split_contexts, split_tasks, variants)

__all__ = ["FREE", "INLINE_MODE", "MULTIPLE", "QA", "SINGLE", "VARIANTS", "Context", "ContextSettings", "Document",
           "SeedCollection", "Splits", "build_splits", "construct_task", "construct_tasks", "context_groups",
           "episode_mode", "generate_contexts", "load_seed_contexts", "math_tasks", "parse_qa", "parse_row",
           "prompt_variant", "qa_mix", "settings_from", "split_contexts", "split_tasks", "variants"]

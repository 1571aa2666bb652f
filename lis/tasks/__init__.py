"""Task sets: one record for every domain, loaded offline from data/samples or from the hub.

    from lis.tasks import load_samples, load_hub, select, write_tasks, read_tasks

    tasks = load_samples("math")                                   # 30 AIME 2025 problems
    tasks = load_hub("biomed", revision="<sha>")                   # the paper's own rows
    tasks = load_hub("biomed", revision="<sha>", dataset="original")  # MedXpertQA, formatted like the paper
    tasks = select(tasks, limit=50, seed=0)

Repeats (AIME 16x, AA-LCR 4x in the paper) are a runner setting, never rows: ids are unique.
"""
from lis.tasks.checks import ensure_unique_ids
from lis.tasks.domains import DOMAINS, EVAL_DOMAINS, PAPER_BENCH
from lis.tasks.hub import load_hub
from lis.tasks.io import read_tasks, write_tasks
from lis.tasks.samples import load_samples, samples_dir
from lis.tasks.schema import Task
from lis.tasks.select import select

__all__ = ["DOMAINS", "EVAL_DOMAINS", "PAPER_BENCH", "Task", "ensure_unique_ids", "load_hub", "load_samples",
           "read_tasks", "samples_dir", "select", "write_tasks"]

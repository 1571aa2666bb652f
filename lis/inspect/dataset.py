"""lis task sets as Inspect datasets: the same tasks ``lis tasks`` writes, one ``Sample`` per task.

    tasks = load_task_set(params, "math", source="samples")          # lis Task records
    dataset = task_dataset(tasks, "sandbox", name="lis/math")       # Inspect samples, in task order

A sample's ``id`` is the task id, its ``input`` the mode's first-turn prompt, its ``target`` the
ground truth, its ``metadata`` the task record without document texts plus ``task_hash``. Document
texts stay in this process (:func:`task_for`), not in every sample of the log (AA-LCR's are large).
Samples keep the task set's order, so every run sees them in the same order.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from lis.context_tasks import held_out_tasks
from lis.errors import LisError
from lis.inspect.messages import to_inspect
from lis.prompts import render_prompts
from lis.tasks import PAPER_BENCH, load_hub, load_samples, read_tasks, select
from lis.tasks.schema import Task
from lis.util.hashing import hash_obj

SOURCES = ("samples", "hub", "generated")
_lock = threading.Lock()
_by_hash: dict[str, Task] = {}   # task hash → the task with its documents (this process's datasets)


def task_hash(task: Task) -> str:
    return hash_obj(task.to_dict())


def load_task_set(params, domain: str, *, source: str | None = None, tasks_file: str | Path | None = None,
                  limit: int | None = None, seed: int | None = None) -> list[Task]:
    """The tasks of ``domain`` as ``lis tasks`` reads them: ``tasks_file`` (a JSONL ``lis tasks`` wrote)
    when given, else ``source`` (default: the profile's ``tasks.domains.<domain>.source``). ``limit`` and
    ``seed`` draw a seeded subset in the set's order (defaults: the profile's; none for a task file).
    Raises LisError (one line) for an unknown source or a set that cannot be read."""
    sec = params.settings("tasks").written()
    conf = dict(sec["domains"].get(domain, {}))
    if tasks_file is not None:
        tasks = read_tasks(Path(tasks_file))
        wrong = sorted({t.domain for t in tasks} - {domain})
        if wrong:
            raise LisError(f"{tasks_file} holds {', '.join(wrong)} tasks, not {domain}",
                           f"give the task file of {domain} (lis tasks --domain {domain})")
    else:
        source = source or conf.get("source") or "samples"
        if source not in SOURCES:
            raise LisError(f"unknown task source {source!r}", f"use one of: {', '.join(SOURCES)}")
        if source == "samples":
            tasks = load_samples(domain, params.root / sec["samples_dir"])
        elif source == "hub":
            tasks = load_hub(domain, conf.get("revision"), dataset=conf.get("dataset") or "paper",
                             bench_dataset=sec.get("bench_dataset") or PAPER_BENCH)
        else:
            if domain != "instruct_pretrain":
                raise LisError(f"source generated applies to the held-out context tasks only, not {domain}",
                               "use source=samples or source=hub")
            tasks, _ = held_out_tasks(sec.get("context"), params.root)
    if tasks_file is None:  # the profile's draw builds a set; a task file is the set
        limit = limit if limit is not None else conf.get("limit")
        seed = seed if seed is not None else conf.get("seed", 0)
    return select(tasks, limit, int(seed or 0))


def _record(task: Task) -> dict[str, Any]:
    rec = task.to_dict()
    rec["input_files"] = {}
    rec["documents"] = list(task.input_files)
    return rec


def problem_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A sample's input as Inspect View shows it: the problem (the user turn), without the system
    prompt, which the solver's messages carry (lis's loop renders both itself)."""
    return [m for m in messages if m.get("role") != "system"] or messages


def task_dataset(tasks: list[Task], mode: str, *, name: str, location: str | None = None) -> MemoryDataset:
    """One sample per task (see the module doc); remembers each task's documents for :func:`task_for`."""
    samples = []
    for t in tasks:
        h = task_hash(t)
        with _lock:
            _by_hash[h] = t
        meta = {"domain": t.domain, "qa_type": t.qa_type, "source": t.meta.get("source"), "task_hash": h,
                "lis_task": _record(t)}
        samples.append(Sample(id=t.id, input=to_inspect(problem_messages(render_prompts(t, mode))),
                              target=t.ground_truth, metadata=meta))
    return MemoryDataset(samples, name=name, location=location, shuffled=False)


def task_for(metadata: dict[str, Any]) -> Task:
    """The lis task of a sample: with its documents when this process built the dataset, else the
    record in the metadata (a sample made elsewhere must carry its documents there)."""
    h = metadata.get("task_hash")
    with _lock:
        known = _by_hash.get(h) if h else None
    if known is not None:
        return known
    rec = metadata.get("lis_task")
    if not isinstance(rec, dict):
        raise LisError("this sample carries no lis task (metadata lis_task)",
                       "build the dataset with lis.inspect.dataset.task_dataset, or use the lis/<domain> tasks")
    return Task.from_dict({k: v for k, v in rec.items() if k != "documents"})

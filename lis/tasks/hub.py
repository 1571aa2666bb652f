"""The hub source: the paper's own datasets, or the original benchmarks, at a revision.

``dataset="paper"`` reads ``bench_dataset`` (params ``tasks.bench_dataset``, by default
``daixuancheng/llm-in-sandbox-bench``; config = domain, split ``test``)
or, for ``instruct_pretrain``, ``daixuancheng/llm-in-sandbox-rl`` (config ``instruct_pretrain``,
split ``train``, or a ``*_mini`` validation config, split ``test``). ``dataset="original"`` reads
the upstream benchmark (AIME, UGPhysics, ChemBench4K, MedXpertQA, AA-LCR, IFBench) and formats it
like the paper. The paper's rows may repeat an item as ``<id>_00``, ``<id>_01``, ...: repeats are
a runner setting here, so identical repeats collapse to one task with the base id.

A revision should be pinned (a commit sha). Without one the dataset's current ``main`` is read
with a warning, and the commit actually read is what :func:`lis.tasks.hub_access.recording_commits`
reports (``lis tasks`` writes it to the manifest); ``require_pinned=True`` refuses instead.
"""
from __future__ import annotations

import logging
import re

from lis.errors import LisError
from lis.tasks import instruct_pretrain as rl
from lis.tasks.checks import ensure_sane
from lis.tasks.domains import DOMAINS, EVAL_DOMAINS, PAPER_BENCH, base_domain, module
from lis.tasks.hub_access import hub_rows, recording_commits
from lis.tasks.schema import Task

log = logging.getLogger("lis.tasks.hub")
DATASETS = ("paper", "original")
_REPEAT = re.compile(r"^(?P<base>.+)_(?P<rep>\d{2})$")


def collapse_repeats(tasks: list[Task]) -> list[Task]:
    """One task per item when every id ends in a two-digit repeat suffix and the repeats are identical.

    The kept task gets the base id and ``meta["source_ids"]`` (the ids it stands for). When some id
    has no suffix, or two repeats of one base differ, the tasks are returned unchanged.
    """
    matches = [_REPEAT.match(t.id) for t in tasks]
    if not tasks or not all(matches):
        return tasks
    groups: dict[str, list[Task]] = {}
    for t, m in zip(tasks, matches):
        groups.setdefault(m["base"], []).append(t)
    for group in groups.values():
        key = (group[0].problem_statement, group[0].ground_truth, group[0].input_files)
        if any((t.problem_statement, t.ground_truth, t.input_files) != key for t in group):
            return tasks
    out = []
    for base, group in groups.items():
        first = group[0]
        first.meta["source_ids"] = [t.id for t in group]
        first.id = base
        out.append(first)
    return out


def paper_source(domain: str, config: str | None = None, bench_dataset: str = PAPER_BENCH) -> tuple[str, str, str]:
    """(dataset, config, split) of the paper's rows for ``domain`` (evaluation domains from
    ``bench_dataset``); raises LisError for an unknown config."""
    if domain == rl.DOMAIN:
        cfg = config or rl.TRAIN_CONFIG
        if cfg not in (rl.TRAIN_CONFIG, *rl.MINI_CONFIGS):
            raise LisError(f"unknown config {cfg!r} of {rl.PAPER_DATASET}",
                           f"use {rl.TRAIN_CONFIG} or one of {', '.join(rl.MINI_CONFIGS)}")
        return rl.PAPER_DATASET, cfg, rl.split_of(cfg)
    if domain not in EVAL_DOMAINS:
        raise LisError(f"the paper's hub datasets have no {domain!r} config", f"use one of: {', '.join(EVAL_DOMAINS)}")
    if config not in (None, domain):
        raise LisError(f"config {config!r} does not apply to {domain}", "leave --config out")
    if not bench_dataset or not str(bench_dataset).strip():
        raise LisError("tasks.bench_dataset is empty", f"name the hub dataset of the paper's benchmark, e.g. {PAPER_BENCH}")
    return str(bench_dataset).strip(), domain, "test"


def _revision(repo: str, domain: str, revision: str | None, require_pinned: bool) -> str:
    """The revision to read: the pinned one, else ``main`` with a warning (or a LisError when pins are required)."""
    if revision is not None and str(revision).strip():
        return str(revision).strip()
    if require_pinned:
        raise LisError(f"no revision pinned for the hub dataset {repo} ({domain})",
                       f"set tasks.domains.{domain}.revision (or --revision) to its commit sha "
                       f"(HfApi().dataset_info('{repo}').sha), or drop --require-pinned")
    log.warning("%s: no revision pinned (tasks.domains.%s.revision is null): reading its current main; the resolved "
                "commit is recorded in the task manifest", repo, domain)
    return "main"


def load_hub(domain: str, revision: str | None, *, dataset: str = "paper", config: str | None = None,
             bench_dataset: str = PAPER_BENCH, require_pinned: bool = False) -> list[Task]:
    """The tasks of ``domain`` from the hub at ``revision`` (None: the current ``main``, with a warning).

    Each task's ``meta["source"]`` names the commit read (when known). Raises LisError (one line)
    when the hub cannot be reached and the revision is not cached (naming the dataset and
    suggesting ``--source samples``), when no revision is given and ``require_pinned``, when a
    pinned commit is not the one read, when the domain has no such dataset, or when rows are
    malformed or ids repeat after collapsing repeats.
    """
    if dataset not in DATASETS:
        raise LisError(f"unknown hub dataset kind {dataset!r}", f"use one of: {', '.join(DATASETS)}")
    mod = module(domain)
    with recording_commits() as commits:
        if dataset == "original":
            if not hasattr(mod, "load_original"):
                raise LisError(f"{domain} has no original dataset on the hub", "use --dataset paper")
            repo = getattr(mod, "ORIGINAL_DATASET", None) or mod.ORIGINAL[0]  # the original benchmark's hub repo
            rev = _revision(repo, domain, revision, require_pinned)
            tasks = mod.load_original(rev)
            at = commits.get(repo) or rev
            for t in tasks:
                t.meta["source"] = f"hub:original:{mod.BENCHMARK}@{at}"
            return ensure_sane(tasks, f"{mod.BENCHMARK} at {at}")
        name, cfg, split = paper_source(domain, config, bench_dataset)
        rows = hub_rows(name, cfg, split, _revision(name, domain, revision, require_pinned))
        return paper_tasks(rows, f"hub:{name}/{cfg}@{commits.get(name) or revision or 'main'}", domain)


def paper_tasks(rows: list[dict], source: str, domain: str) -> list[Task]:
    """Tasks from rows of the paper's datasets: repeats collapsed, domain meta added, ids checked.

    A row without a known domain (``math``, ``biomed_mini``, ...) takes ``domain`` and keeps its own
    in ``meta["source_domain"]``. Raises LisError when a row is malformed or ids still repeat after
    collapsing identical repeats.
    """
    tasks = collapse_repeats([rl.from_row(r, domain) for r in rows])
    for t in tasks:
        if base_domain(t.domain) not in DOMAINS:
            t.meta["source_domain"], t.domain = t.domain, domain
        module(base_domain(t.domain)).enrich_paper(t)
        t.meta["source"] = source
    return ensure_sane(tasks, source)

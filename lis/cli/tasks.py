"""``lis tasks``: the task-set stage — one domain's tasks as JSONL plus a manifest beside it.

    lis tasks --domain math --profile smoke --out data/tasks/math.jsonl          # settings from params (the pipeline)
    lis tasks --domain biomed --source hub --revision <sha> --limit 100 --seed 0 --out data/tasks/biomed.jsonl
    lis tasks --domain math --source hub --require-pinned --out data/tasks/math.jsonl   # strict: refuse an unpinned revision
    lis tasks --domain instruct_pretrain --source generated --out data/tasks/instruct_pretrain.jsonl  # held-out context tasks

Settings come from params (``tasks.domains.<domain>``, ``tasks.samples_dir``, ``tasks.bench_dataset``,
``tasks.context`` for source generated, profile applied); a flag given on the command line wins over params.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Verbose
from lis.context_tasks import held_out_tasks
from lis.errors import LisError, ParamsError
from lis.manifest import git_state, package_versions, write_json
from lis.params import load
from lis.tasks import load_hub, load_samples, PAPER_BENCH, samples_dir as default_samples, select, write_tasks
from lis.tasks.hub_access import recording_commits
from lis.util.files import sha256_file
from lis.util.hashing import hash_tree
from lis.util.log import setup_logging

log = logging.getLogger("lis.tasks")
SOURCES = ("samples", "hub", "generated")

Domain = typer.Option(..., "--domain", "-d", help="math | physics | chem | biomed | long_context | instruct_follow"
                                                  " | instruct_pretrain | demo.")
Source = typer.Option(None, "--source", "-s",
                      help="samples: the offline sample in data/samples (none for chem and instruct_pretrain); "
                           "hub: the Hugging Face hub at --revision; generated (instruct_pretrain only): the "
                           "held-out split of the context tasks built as params tasks.context says.")
Revision = typer.Option(None, "--revision", "-r", help="hub only: the dataset revision to pin (a commit sha). "
                                                       "Without one the current main is read, with a warning, and the "
                                                       "commit read is recorded in the manifest.")
RequirePinned = typer.Option(False, "--require-pinned", help="hub only: refuse to read a dataset whose revision is not "
                                                            "pinned (strict runs).")
BenchDataset = typer.Option(None, "--bench-dataset", help="hub, paper only: the hub dataset of the paper's benchmark "
                                                          "(default: tasks.bench_dataset).")
Dataset = typer.Option(None, "--dataset",
                       help="hub only: paper (daixuancheng/llm-in-sandbox-bench and -rl, the rows the paper ran) or "
                            "original (the upstream benchmark, formatted like the paper).")
Config = typer.Option(None, "--config", help="hub, instruct_pretrain only: instruct_pretrain (train, the default) "
                                             "or a *_mini validation config.")
Limit = typer.Option(None, "--limit", "-n", min=1, max=10000000, help="keep at most N tasks (a seeded draw; the order is kept).")
Seed = typer.Option(None, "--seed", min=0, max=2**32 - 1, help="seed of the --limit draw.")
Out = typer.Option(..., "--out", "-o", help="JSONL file to write, e.g. data/tasks/<domain>.jsonl; the manifest "
                                            "goes beside it as <name>.manifest.json.")
SamplesDir = typer.Option(None, "--samples-dir", help="samples only: the folder holding the samples "
                                                      "(default: data/samples of this checkout, or $LIS_SAMPLES_DIR).")


def manifest_path(out: Path) -> Path:
    """``data/tasks/math.jsonl`` → ``data/tasks/math.manifest.json``."""
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return out.with_name(stem + ".manifest.json")


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it (manifests stay machine-independent)."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def _params_tasks(domain: str, profile: Optional[str], params_file: Optional[Path]):
    """The domain's settings, samples_dir, bench_dataset and (tasks.context, project root) from params;
    ({}, None, None, None) outside a project."""

    try:
        p = load(profile=profile, params_file=params_file)
    except ParamsError:
        if profile or params_file:
            raise
        return {}, None, None, None
    sec = p.section("tasks")
    return (dict(sec["domains"].get(domain, {})), str(p.root / sec["samples_dir"]), sec.get("bench_dataset"),
            (sec.get("context") or {}, p.root))


def _held_out(domain: str, context: Optional[tuple]) -> tuple[list, dict]:
    """The held-out context tasks (source generated) and the manifest facts about them."""

    if domain != "instruct_pretrain":
        raise LisError(f"--source generated applies to instruct_pretrain only, not {domain}",
                       "use --source samples or --source hub")
    sec, root = context if context is not None else ({}, Path.cwd())
    return held_out_tasks(sec, root)


def tasks(domain: str = Domain, source: Optional[str] = Source, revision: Optional[str] = Revision,
          dataset: Optional[str] = Dataset, config: Optional[str] = Config, limit: Optional[int] = Limit,
          seed: Optional[int] = Seed, out: Path = Out, samples_dir: Optional[Path] = SamplesDir,
          require_pinned: bool = RequirePinned, bench_dataset: Optional[str] = BenchDataset,
          profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
          log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Write one domain's task set (JSONL, one Task per line) and its manifest (count, source, revision, sha256).

    Repeats (AIME 16x, AA-LCR 4x in the paper) are a runner setting: every id appears once.

    With --source hub the revision should be pinned: an unpinned one reads the current main with a
    warning (refused with --require-pinned); the commit read is recorded in the manifest (resolved_commit).

    An unreachable hub (revision not in the local HF cache) ends in a one-line error suggesting --source samples.
    """

    setup_logging(log_file, verbose)
    t0 = time.monotonic()
    conf, params_samples, params_bench, context = _params_tasks(domain, profile, params_file)
    source = source or conf.get("source") or "samples"
    if source == "hub":
        revision = revision or conf.get("revision")
        dataset = dataset or conf.get("dataset")
    dataset = dataset or "paper"
    limit = limit if limit is not None else conf.get("limit")
    seed = seed if seed is not None else conf.get("seed", 0)
    if source == "samples" and samples_dir is None and params_samples:
        samples_dir = Path(params_samples)
    if source not in SOURCES:
        raise LisError(f"unknown task source {source!r}", f"use one of: {', '.join(SOURCES)}")
    facts: dict = {"source": source}
    if source == "generated":
        for flag, value in (("--revision", revision), ("--config", config), ("--dataset", dataset != "paper"),
                            ("--require-pinned", require_pinned), ("--bench-dataset", bench_dataset),
                            ("--samples-dir", samples_dir)):
            if value:
                raise LisError(f"{flag} does not apply to --source generated")
        found, more = _held_out(domain, context)
        facts.update(more)
    elif source == "samples":
        for flag, value in (("--revision", revision), ("--config", config), ("--dataset", dataset != "paper"),
                            ("--require-pinned", require_pinned), ("--bench-dataset", bench_dataset)):
            if value:
                raise LisError(f"{flag} applies to --source hub only")
        root = Path(samples_dir) if samples_dir else default_samples()
        found = load_samples(domain, root)
        facts.update(samples_dir=_shown(root), samples_hash=hash_tree(root), revision=None)
    else:
        if samples_dir:
            raise LisError("--samples-dir applies to --source samples only")
        bench = bench_dataset or params_bench or PAPER_BENCH
        log.info("loading %s from the hub (%s dataset) at revision %s", domain, dataset, revision or "main (unpinned)")
        with recording_commits() as commits:
            found = load_hub(domain, revision, dataset=dataset, config=config, bench_dataset=bench,
                             require_pinned=require_pinned)
        resolved = sorted({c for c in commits.values() if c})
        facts.update(dataset=dataset, config=config, bench_dataset=bench if dataset == "paper" else None,
                     revision=revision or None, pinned=bool(revision),
                     resolved_commit=resolved[0] if len(resolved) == 1 else None, commits=commits)
        log.info("read %s at commit %s", ", ".join(commits) or domain, ", ".join(resolved) or "unknown")
    chosen = select(found, limit, seed)
    write_tasks(out, chosen)
    manifest = {"stage": "tasks", "domain": domain, **facts, "limit": limit, "seed": seed,
                "available": len(found), "count": len(chosen), "file": out.name, "sha256": sha256_file(out),
                "git": git_state(Path.cwd()), "packages": package_versions(("lis", "datasets", "huggingface_hub")),
                "wall_s": round(time.monotonic() - t0, 3)}
    write_json(manifest_path(out), manifest)
    log.info("wrote %d of %d %s tasks (%s) to %s", len(chosen), len(found), domain, source, out)

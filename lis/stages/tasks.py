"""The ``tasks`` stage: one domain's task set as JSONL, and a manifest beside it (count, source, revision,
sha256).

A command-line flag given wins over params.

    lis tasks --domain math --profile smoke --out data/tasks/math.jsonl          # settings from params (the pipeline)
    lis tasks --domain biomed --source hub --revision <sha> --limit 100 --seed 0 --out data/tasks/biomed.jsonl
    lis tasks --domain instruct_pretrain --source generated --out data/tasks/instruct_pretrain.jsonl  # held-out
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from lis.context_tasks import held_out_tasks
from lis.errors import LisError
from lis.manifest import git_state, package_versions, write_json
from lis.params import Params
from lis.stages.spec import Option, Stage
from lis.tasks import load_hub, load_samples, PAPER_BENCH, samples_dir as default_samples, select, write_tasks
from lis.tasks.hub_access import recording_commits
from lis.util.files import sha256_file
from lis.util.hashing import hash_tree

STAGE = Stage(
    name="tasks",
    item="domain",
    title="Task set: ${item} (profile ${profile})",
    foreach="${jobs.domains}",
    cmd=("lis tasks --domain ${item} --profile ${profile} --out data/tasks/${item}.jsonl --log "
         "logs/tasks/${item}.log"),
    params=("tasks",),
    deps=("${tasks.samples_dir}",),
    outs=("data/tasks/${item}.jsonl", "data/tasks/${item}.manifest.json"),
)

log = logging.getLogger("lis.tasks")
SOURCES = ("samples", "hub", "generated")
PARAMS_OPTIONAL = True  # outside a project (no params.yaml, none named) the flags alone
ABOUT = """Write one domain's task set (JSONL, one Task per line) and its manifest (count, source, revision, sha256).

Settings come from params (tasks.domains.<domain>, tasks.samples_dir, tasks.bench_dataset, tasks.context for source
generated); a flag given wins. Repeats (AIME 16x, AA-LCR 4x in the paper) are a runner setting: every id appears once.
With --source hub the revision should be pinned: an unpinned one reads the current main with a warning (refused with
--require-pinned); the commit read is recorded in the manifest. An unreachable hub (revision not in the local HF cache)
ends in a one-line error suggesting --source samples."""
OPTIONS = (
    Option("--domain -d", "math | physics | chem | biomed | long_context | instruct_follow | instruct_pretrain | demo.",
           default=...),
    Option("--source -s", "samples: the offline sample in data/samples (none for chem and instruct_pretrain); hub: the "
           "Hugging Face hub at --revision; generated (instruct_pretrain only): the held-out split of the context tasks "
           "built as params tasks.context says."),
    Option("--revision -r", "hub only: the dataset revision to pin (a commit sha). Without one the current main is "
           "read, with a warning, and the commit read is recorded in the manifest."),
    Option("--dataset", "hub only: paper (daixuancheng/llm-in-sandbox-bench and -rl, the rows the paper ran) or "
           "original (the upstream benchmark, formatted like the paper)."),
    Option("--config", "hub, instruct_pretrain only: instruct_pretrain (train, the default) or a *_mini validation "
           "config."),
    Option("--limit -n", "keep at most N tasks (a seeded draw; the order is kept).", int, low=1, high=10000000),
    Option("--seed", "seed of the --limit draw.", int, low=0, high=2**32 - 1),
    Option("--out -o", "JSONL file to write, e.g. data/tasks/<domain>.jsonl; the manifest goes beside it as "
           "<name>.manifest.json.", Path, ..., to="output", name="tasks"),
    Option("--samples-dir", "samples only: the folder holding the samples (default: data/samples of this checkout, "
           "or $LIS_SAMPLES_DIR).", Path),
    Option("--require-pinned", "hub only: refuse to read a dataset whose revision is not pinned (strict runs).", bool,
           False),
    Option("--bench-dataset", "hub, paper only: the hub dataset of the paper's benchmark (default: tasks.bench_dataset)."),
)


@dataclass(frozen=True)
class Settings:
    """One run of the stage, flags and params resolved (:func:`resolve`): each field means what the option of
    its name says (``OPTIONS``; None: not given); for source generated, ``context`` is the params'
    ``tasks.context`` section and ``context_root`` the project root its paths are relative to (None: the
    working directory)."""

    domain: str
    source: str = "samples"
    limit: Optional[int] = None
    seed: int = 0
    revision: Optional[str] = None
    dataset: str = "paper"
    config: Optional[str] = None
    bench_dataset: str = PAPER_BENCH
    require_pinned: bool = False
    context: dict = field(default_factory=dict)
    context_root: Optional[Path] = None
    samples_dir: Optional[Path] = None

    def __post_init__(self):
        if self.source not in SOURCES:
            raise LisError(f"unknown task source {self.source!r}", f"use one of: {', '.join(SOURCES)}")
        if self.source == "generated" and self.domain != "instruct_pretrain":
            raise LisError(f"--source generated applies to instruct_pretrain only, not {self.domain}",
                           "use --source samples or --source hub")


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


def _params_tasks(domain: str, p: Optional[Params]):
    """The domain's settings, samples_dir, bench_dataset and (tasks.context, project root) from params;
    ({}, None, None, None) outside a project (``p`` None)."""

    if p is None:
        return {}, None, None, None
    sec = p.settings("tasks").written()
    return (dict(sec["domains"].get(domain, {})), str(p.root / sec["samples_dir"]), sec.get("bench_dataset"),
            (sec.get("context") or {}, p.root))


def resolve(params: Optional[Params], domain: str, *, source: Optional[str] = None, revision: Optional[str] = None,
            dataset: Optional[str] = None, config: Optional[str] = None, limit: Optional[int] = None,
            seed: Optional[int] = None, samples_dir: Optional[Path] = None, require_pinned: bool = False,
            bench_dataset: Optional[str] = None) -> Settings:
    """The settings from the command line's flags (None / False: not given) and the params
    (``tasks.domains.<domain>``, ``tasks.samples_dir``, ``tasks.bench_dataset``, ``tasks.context``; the
    profile applied; None outside a project): a flag given wins. Raises LisError naming a flag that
    does not apply to the source, ParamsError for bad params."""

    conf, params_samples, params_bench, context = _params_tasks(domain, params)
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
    hub_flags = (("--revision", revision), ("--config", config), ("--dataset", dataset != "paper"),
                 ("--require-pinned", require_pinned), ("--bench-dataset", bench_dataset))
    if source == "generated":
        for flag, value in (*hub_flags, ("--samples-dir", samples_dir)):
            if value:
                raise LisError(f"{flag} does not apply to --source generated")
    elif source == "samples":
        for flag, value in hub_flags:
            if value:
                raise LisError(f"{flag} applies to --source hub only")
        samples_dir = Path(samples_dir) if samples_dir else default_samples()
    elif samples_dir:
        raise LisError("--samples-dir applies to --source samples only")
    sec, root = context if context is not None else ({}, None)
    return Settings(domain=domain, source=source, limit=limit, seed=seed, revision=revision,
                    dataset=dataset, config=config, bench_dataset=bench_dataset or params_bench or PAPER_BENCH,
                    require_pinned=require_pinned, context=sec, context_root=root,
                    samples_dir=samples_dir if source == "samples" else None)


def _from_hub(s: Settings) -> tuple[list, dict[str, Any]]:
    """The tasks read from the hub at ``s.revision``, and the manifest facts: what was asked and the commit read."""

    log.info("loading %s from the hub (%s dataset) at revision %s", s.domain, s.dataset,
             s.revision or "main (unpinned)")
    with recording_commits() as commits:
        found = load_hub(s.domain, s.revision, dataset=s.dataset, config=s.config, bench_dataset=s.bench_dataset,
                         require_pinned=s.require_pinned)
    resolved = sorted({c for c in commits.values() if c})
    facts = dict(dataset=s.dataset, config=s.config, bench_dataset=s.bench_dataset if s.dataset == "paper" else None,
                 revision=s.revision or None, pinned=bool(s.revision),
                 resolved_commit=resolved[0] if len(resolved) == 1 else None, commits=commits)
    log.info("read %s at commit %s", ", ".join(commits) or s.domain, ", ".join(resolved) or "unknown")
    return found, facts


def _found(s: Settings) -> tuple[list, dict[str, Any]]:
    """Every task of the domain from its source, and what the manifest says of the source."""

    facts: dict[str, Any] = {"source": s.source}
    if s.source == "generated":
        found, more = held_out_tasks(s.context, s.context_root if s.context_root is not None else Path.cwd())
        facts.update(more)
    elif s.source == "samples":
        root = s.samples_dir or default_samples()
        found = load_samples(s.domain, root)
        facts.update(samples_dir=_shown(root), samples_hash=hash_tree(root), revision=None)
    else:
        found, more = _from_hub(s)
        facts.update(more)
    return found, facts


def run(settings: Settings, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict[str, Any]:
    """Write the domain's tasks (at most ``settings.limit``, a draw seeded by ``settings.seed``) to
    ``outputs["tasks"]`` (JSONL, one Task per line) and the manifest to ``outputs["manifest"]``
    (absent: :func:`manifest_path` of the former); return the manifest. ``inputs`` is empty: the samples
    folder is ``settings.samples_dir``. Raises LisError (an unknown domain, no offline sample, an unreachable hub)."""

    t0 = time.monotonic()
    found, facts = _found(settings)
    chosen = select(found, settings.limit, settings.seed)
    out = outputs["tasks"]
    write_tasks(out, chosen)
    manifest = {"stage": "tasks", "domain": settings.domain, **facts, "limit": settings.limit, "seed": settings.seed,
                "available": len(found), "count": len(chosen), "file": out.name, "sha256": sha256_file(out),
                "git": git_state(Path.cwd()), "packages": package_versions(("lis", "datasets", "huggingface_hub")),
                "wall_s": round(time.monotonic() - t0, 3)}
    write_json(outputs.get("manifest") or manifest_path(out), manifest)
    log.info("wrote %d of %d %s tasks (%s) to %s", len(chosen), len(found), settings.domain, settings.source, out)
    return manifest

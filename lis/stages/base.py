"""The ``base`` stage: the starting model in data/models/base (params ``base``) — the tiny offline Qwen3
built here (random weights, its own tokenizer), a hub model at a revision, or a local folder.

The whole stage in one module: its declaration (``STAGE``, from which dvc.yaml is rendered and the
Snakemake rule takes its code and params), :func:`resolve` (the params' ``base`` section as
:class:`Settings`) and :func:`run`, which builds, downloads or copies the model
(:mod:`lis.offline.base`). ``lis train base`` calls both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from lis.errors import LisError
from lis.params import Params
from lis.stages.spec import Stage
from lis.tasks.io import read_tasks
from lis.offline.base import build_base, copy_base, fetch_hub_base

STAGE = Stage(
    name="base",
    cmd=("lis train base --out data/models/base --context-tasks data/train/context/files.jsonl "
         "--profile ${profile} --log logs/train/base.log"),
    entry="lis.cli.train_base:base",
    params=("base",),
    deps=("data/train/context/files.jsonl", "${tasks.samples_dir}"),
    code=(
        "lis/paths.py", "lis/agent", "lis/models", "lis/prompts", "lis/sandbox", "lis/tasks", "lis/offline",
        "lis/stages/__init__.py", "lis/stages/spec.py", "lis/stages/base.py", "lis/cli/train_base.py",
    ),
    outs=("data/models/base",),
)

SOURCES = ("tiny", "hub", "path")


@dataclass(frozen=True)
class Settings:
    """One run of the stage: the params' ``base`` section (:func:`resolve`, which fills every field; the
    defaults live in the section's model, lis/config). The context tasks, the one data input, are not
    here: they are ``inputs["context_tasks"]`` of :func:`run`."""

    source: str
    """tiny: build the offline tiny Qwen3 | hub: download ``hub_model`` | path: copy the folder ``path``."""
    seed: Optional[int] = None
    """tiny: the seed of its weights and corpus."""
    hub_model: Optional[str] = None
    """hub: the hub model (e.g. Qwen/Qwen3-4B-Instruct-2507)."""
    hub_revision: Optional[str] = None
    """hub: its revision (None: the current main, recorded in the manifest)."""
    path: Optional[str] = None
    """path: the local model folder copied in."""
    vocab_size: Optional[int] = None
    """tiny: the tokenizer's vocabulary."""
    max_context: Optional[int] = None
    """tiny: the model's context length."""
    arch: dict = field(default_factory=dict)
    """tiny: the Qwen3 shape (keys of :data:`lis.offline.base.DEFAULT_ARCH`; those left out: its values)."""
    stdlib_files: Optional[int] = None
    """tiny: CPython standard-library sources in the tokenizer's corpus."""
    corpus_episodes: Optional[int] = None
    """tiny: scripted teacher episodes in the tokenizer's corpus."""
    corpus_context_tasks: Optional[int] = None
    """tiny: the first this many context tasks' prompts join the corpus (when context tasks are given)."""

    def __post_init__(self):
        if self.source not in SOURCES:  # the schema prevents it; kept for direct callers
            raise LisError(f"unknown base.source {self.source!r}", "use tiny, hub or path")
        if self.source == "path" and not self.path:
            raise LisError("base.source is path but base.path is empty", "set base.path to a local model folder")


def resolve(params: Params) -> Settings:
    """The settings from the params' ``base`` section (the profile applied). Raises LisError for
    source path without a path."""

    sec = params.section("base")
    t, hub = sec["tiny"], sec["hub"]
    return Settings(source=sec["source"], seed=int(sec["seed"]), hub_model=hub["model"],
                    hub_revision=hub.get("revision"), path=sec.get("path"), vocab_size=int(t["vocab_size"]),
                    max_context=int(t["max_context"]), arch=dict(t["arch"]), stdlib_files=int(t["stdlib_files"]),
                    corpus_episodes=int(t["corpus_episodes"]), corpus_context_tasks=int(t["corpus_context_tasks"]))


def _context_tasks(path: Optional[Path], n: int) -> list:
    """The first ``n`` training context tasks of ``path`` (None: none). Raises LisError when the file
    is missing or holds none."""

    if path is None:
        return []
    if not path.is_file():
        raise LisError(f"no context tasks at {path}", "run the context tasks stage first (lis context-tasks)")
    tasks = read_tasks(path)[:n]
    if not tasks:
        raise LisError(f"no context tasks in {path}", "give the context tasks stage's JSONL (lis context-tasks), or "
                       "leave --context-tasks out")
    return tasks


def run(settings: Settings, inputs: dict[str, Optional[Path]], outputs: dict[str, Path]) -> dict[str, Any]:
    """Write the base model into ``outputs["out"]`` (replaced) with its manifest.json, and return the
    manifest. Source tiny: built here, its tokenizer's corpus also holding the prompts of the first
    ``settings.corpus_context_tasks`` of ``inputs["context_tasks"]`` when given (absent or None: none);
    hub: downloaded; path: copied. Raises LisError (context tasks missing or empty, a download refused,
    a folder that is not a model)."""

    out = outputs["out"]
    s = settings
    if s.source == "tiny":
        tasks = _context_tasks(inputs.get("context_tasks"), s.corpus_context_tasks)
        return build_base(out, seed=s.seed, vocab_size=s.vocab_size, max_context=s.max_context, arch=dict(s.arch),
                          stdlib_files=s.stdlib_files, corpus_episodes=s.corpus_episodes, context_tasks=tasks)
    if s.source == "hub":
        return fetch_hub_base(out, s.hub_model, s.hub_revision)
    return copy_base(out, s.path)

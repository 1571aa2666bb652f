"""The ``base`` stage: the starting model in data/models/base (params ``base``) — the tiny offline Qwen3
built here (random weights, its own tokenizer), a hub model at a revision, or a local folder.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from lis.config.training import BaseSection
from lis.errors import LisError
from lis.params import Params
from lis.stages.spec import Option, Stage
from lis.tasks.io import read_tasks
from lis.offline.base import build_base, copy_base, fetch_hub_base

STAGE = Stage(
    name="base",
    title="Base model (${profile})",
    priority=50,
    cmd=("lis train base --out data/models/base --context-tasks data/train/context/files.jsonl "
         "--profile ${profile} --log logs/train/base.log"),
    params=("base",),
    deps=("data/train/context/files.jsonl", "${tasks.samples_dir}"),
    outs=("data/models/base",),
)

OPTIONS = (Option("--context-tasks", "Training context tasks whose prompts join the tiny tokenizer's corpus.", Path,
                  to="input"),)
HELP = {"out": "Folder to write the base model into."}

Settings = BaseSection
"""One run of the stage: the params' ``base`` section, validated (:func:`resolve`). The context tasks, the one data
input, are not here: they are ``inputs["context_tasks"]`` of :func:`run`."""


def resolve(params: Params) -> BaseSection:
    """The params' ``base`` section (the profile applied). Raises ParamsError naming a bad key (source path
    without a path)."""
    return params.settings("base")


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
        t = s.tiny
        tasks = _context_tasks(inputs.get("context_tasks"), t.corpus_context_tasks)
        return build_base(out, seed=s.seed, vocab_size=t.vocab_size, max_context=t.max_context,
                          arch=t.arch.model_dump(), stdlib_files=t.stdlib_files, corpus_episodes=t.corpus_episodes,
                          context_tasks=tasks)
    if s.source == "hub":
        return fetch_hub_base(out, s.hub.model, s.hub.revision)
    return copy_base(out, s.path)


def summary(manifest: dict[str, Any]) -> str:
    """The manifest on the terminal, without the package versions."""
    return json.dumps({k: v for k, v in manifest.items() if k != "versions"}, indent=1)

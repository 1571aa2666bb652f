"""The ``context_tasks`` stage: Context tasks for RL (train split; files, prompt and math variants).
"""
from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lis.config.tasks import ContextSection
from lis.context_tasks import build_splits, knobs, qa_mix, VARIANTS, variants
from lis.manifest import stage_manifest, write_json
from lis.params import Params
from lis.stages.spec import Option, Stage
from lis.tasks import write_tasks
from lis.util.files import sha256_file
from lis.util.hashing import hash_obj

STAGE = Stage(
    name="context_tasks",
    title="Context tasks for RL (train split; files, prompt and math variants)",
    cmd=("lis context-tasks --out-dir data/train/context --profile ${profile} --log "
         "logs/train/context_tasks.log"),
    params=("tasks",),
    deps=("${tasks.samples_dir}",),
    outs=(
        "data/train/context/files.jsonl", "data/train/context/prompt.jsonl", "data/train/context/math.jsonl",
        "data/train/context/manifest.json",
    ),
)

log = logging.getLogger("lis.context_tasks")

ABOUT = """Build the training context tasks (train split) of every data variant from params `tasks.context`.

Source generated (offline, seeded), seed (the Instruction Pre-Training seed rows, from the hub or a local JSONL) or
paper (the authors' constructed set on the hub). An unreachable hub ends in a one-line error; a bad knob names its key."""
OPTIONS = (Option("--out-dir --out -o", "Folder for files.jsonl, prompt.jsonl, math.jsonl and manifest.json.", Path,
                  Path("data/train/context"), to="output", name="out"),)


@dataclass(frozen=True)
class Settings:
    """One run of the stage, the params resolved (:func:`resolve`)."""

    context: ContextSection
    """The knobs of the construction (the section checked by its model, defaults filled in)."""
    section: dict
    """The params' ``tasks.context`` as given (its hash is the manifest's ``params_hash``)."""
    root: Path
    """The project root: the section's paths (a local seed collection) are relative to it."""
    profile: str
    """The params profile (recorded in the manifest)."""


def resolve(p: Params) -> Settings:
    """The settings from the params (``tasks.context``, the profile applied)."""

    context = p.settings("tasks").context
    return Settings(context=context, section=context.written(), root=p.root, profile=p.profile)


def outputs_in(out_dir: Path) -> dict[str, Path]:
    """The stage's outputs in ``out_dir``: ``<variant>.jsonl`` per variant and ``manifest.json``."""
    return {**{name: out_dir / f"{name}.jsonl" for name in VARIANTS}, "manifest": out_dir / "manifest.json"}


def run(settings: Settings, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict[str, Any]:
    """Build the train split of the context tasks from ``settings.context`` and write each variant's tasks
    to ``outputs[<variant>]`` (JSONL) and the manifest to ``outputs["manifest"]`` (:func:`outputs_in`);
    return the manifest. ``inputs`` is empty: the sources are the settings' (relative to
    ``settings.root``). Raises LisError when the source cannot be read."""

    t0 = time.monotonic()
    if "out" in outputs:  # the command line's folder
        outputs = outputs_in(outputs["out"])
    s = settings.context
    splits = build_splits(s, settings.root)
    sets = variants(splits.train, s.seed, s.math_tasks)
    described = {}
    for name, tasks in sets.items():
        path = write_tasks(outputs[name], tasks)
        described[name] = {"file": path.name, "count": len(tasks), "sha256": sha256_file(path),
                           "qa_mix": qa_mix(tasks), "qa_types": _count(t.qa_type for t in tasks),
                           "domains": _count(t.domain for t in tasks)}
        log.info("%s: %d tasks %s", path, len(tasks), described[name]["qa_mix"])
    held_ids = sorted({str(t.meta.get("context_id")) for t in splits.held_out})
    manifest = stage_manifest(
        "context_tasks", settings.root, settings.profile, hash_obj({"tasks.context": settings.section}),
        time.monotonic() - t0, source=s.source, seed=s.seed, knobs=knobs(s), source_facts=splits.facts,
        variants=described, split="train", held_out={"tasks": len(splits.held_out), "contexts": len(held_ids),
                                                     "context_ids_sha256": hash_obj(held_ids, 64)},
        content_sha256=hash_obj({k: v["sha256"] for k, v in described.items()}, 64))
    write_json(outputs["manifest"], manifest)
    return manifest


def _count(values) -> dict[str, int]:
    return dict(sorted(Counter(str(v) for v in values).items()))


def summary(manifest: dict[str, Any], outputs: dict[str, Path]) -> str:
    counts = ", ".join(f"{k} {v['count']}" for k, v in manifest["variants"].items())
    return f"wrote {counts} tasks to {outputs['out']}"

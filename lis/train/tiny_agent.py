"""The tiny offline agent in one call: base → teacher episodes in the real sandbox → SFT.

    lis train tiny-agent --out DIR [--profile smoke]           # the same stages the pipeline runs

The pipeline runs these as separate stages (base, teacher, sft) with their outputs under
data/; this composes the very same functions into one folder for tests and for users who want
the offline agent without running the pipeline. ``cached_tiny_agent()`` keeps one build per
recipe under the cache folder ($LIS_CACHE_DIR or ~/.cache/lis), keyed by the params sections and
the code that make it, so the test suite builds it once per machine.
"""
from __future__ import annotations

import json
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from lis.models.scripted import ScriptedModel
from lis.paths import cache_dir
from lis.runtime import agent_config
from lis.sandbox.pool import SandboxPool
from lis.offline.teacher.run import run_teacher
from lis.offline.teacher.items import teacher_items
from lis.offline.base import build_base
from lis.util.code_version import code_version
from lis.util.hashing import hash_obj

log = logging.getLogger("lis.train.tiny_agent")

CODE = ("lis/train", "lis/offline", "lis/runtime", "lis/agent", "lis/prompts", "lis/models", "lis/tasks")


def build_tiny_agent(out: str | Path, params, sandbox_config, context_tasks: list | None = None) -> dict[str, Any]:
    """Base, teacher and SFT with ``params`` (sections base, teacher, sft, agent) into ``out``;
    the teacher runs in sandboxes of ``sandbox_config``. Returns the SFT manifest."""
    # lazy: loads torch; importing this module does not
    from lis.train.sft.stage import run_sft_stage, successful_records

    out = Path(out)
    work = Path(tempfile.mkdtemp(prefix=".tiny-agent.", dir=out.parent if out.parent.exists() else None))
    try:
        b, t = params.section("base"), params.section("base")["tiny"]
        build_base(work / "base", seed=int(b["seed"]), vocab_size=int(t["vocab_size"]),
                   max_context=int(t["max_context"]), arch=dict(t["arch"]), stdlib_files=int(t["stdlib_files"]),
                   corpus_episodes=int(t["corpus_episodes"]),
                   context_tasks=(context_tasks or [])[: int(t["corpus_context_tasks"])])
        sec = params.section("teacher")
        if not context_tasks:
            sec = {**sec, "context_episodes": 0}
        items = teacher_items(sec, context_tasks or [])
        workers = int(sec["workers"])
        with SandboxPool(sandbox_config, max_concurrent=workers) as pool:
            records = run_teacher(items, agent_config(params, sandbox=sandbox_config), pool=pool,
                                  model_for=lambda it: ScriptedModel(it.replies, name="teacher"),
                                  min_reward=float(sec["min_reward"]), workers=workers)
        log.info("tiny agent: %d teacher episodes, %d successful", len(records), len(successful_records(records)))
        manifest = run_sft_stage(params.section("sft"), work / "base", records, work / "sft", section_name="tiny-agent")
        manifest["teacher"] = {"episodes": len(records), "successful": len(successful_records(records))}
        (work / "sft" / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if out.exists():
            shutil.rmtree(out)
        (work / "sft").rename(out)
        return manifest
    finally:
        shutil.rmtree(work, ignore_errors=True)


def recipe_key(params, sandbox_config) -> str:
    return hash_obj({s: params.section(s) for s in ("base", "teacher", "sft")} |
                    {"agent": params.section("agent"), "image": sandbox_config.image or sandbox_config.rootfs,
                     "code": code_version(*CODE)})


def cached_tiny_agent(params, sandbox_config) -> Path:
    """The tiny agent of ``params`` built once into the cache folder (a lock lets one process build
    while others wait); returns its folder."""
    from filelock import FileLock

    folder = cache_dir() / "models" / f"tiny-agent-{recipe_key(params, sandbox_config)}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder.parent / f".{folder.name}.lock")):
        if not (folder / "manifest.json").is_file():
            log.info("building the tiny agent into %s", folder)
            build_tiny_agent(folder, params, sandbox_config)
    return folder

"""The tiny offline agent in one call: base → teacher episodes in the real sandbox → SFT.

    lis train tiny-agent --out DIR [--profile smoke]           # the same stages the pipeline runs

This composes the pipeline's base, teacher and sft functions into one folder, for tests and for users
who want the offline agent without the pipeline. ``cached_tiny_agent()`` keeps builds under the cache
folder ($LIS_CACHE_DIR or ~/.cache/lis) in two parts, so each is built once per machine and rebuilt only
when an edit changes it:

- ``models/tiny-teacher-<key>``: the base and the teacher's records, keyed broadly (:func:`teacher_key`:
  params sections, image, code, sample tasks, library versions).
- ``models/tiny-agent-<key>``: the SFT'd agent, keyed by content (:func:`agent_key`: the base's files,
  the examples, the sft settings and code, the training libraries' versions), so an edit that leaves
  base and records as they were finds the agent already trained.
"""
from __future__ import annotations

import hashlib
import json
import logging
import platform
import shutil
import tempfile
from pathlib import Path
from typing import Any

from lis.config.training import SftSection
from lis.models.scripted import ScriptedModel
from lis.paths import cache_dir
from lis.runtime import agent_config
from lis.manifest import package_versions
from lis.sandbox.pool import SandboxPool
from lis.offline.teacher.run import run_teacher
from lis.offline.teacher.items import teacher_items
from lis.offline.base import build_base
from lis.tasks.samples import samples_dir
from lis.util.code_version import code_version
from lis.util.files import replace_dir, sha256_file
from lis.util.hashing import hash_obj, hash_tree
from lis.util.jsonl import read_jsonl, write_jsonl

log = logging.getLogger("lis.train.tiny_agent")

# What builds the base and runs the teacher (broad: a cheap rebuild is better than a stale one).
TEACHER_CODE = ("lis/offline", "lis/runtime", "lis/agent", "lis/prompts", "lis/models", "lis/tasks", "lis/sandbox",
                "lis/rewards", "lis/context_tasks", "lis/records.py", "lis/paths.py", "lis/util",
                "lis/train/tiny_agent.py")
# What turns the base and the examples into weights (the data's encoding is keyed by the examples themselves).
SFT_CODE = ("lis/train/sft", "lis/train/precision.py", "lis/train/lora.py")
TEACHER_SECTIONS = ("base", "teacher", "agent", "sandbox", "image")
RECORDS = "trajectories.jsonl"


def build_teacher(out: str | Path, params, sandbox_config, context_tasks: list | None = None) -> dict[str, Any]:
    """The base (``out/base``) and the teacher's episodes in sandboxes of ``sandbox_config``
    (``out/trajectories.jsonl``, in order) of ``params``; writes and returns ``out/manifest.json``."""
    out = Path(out)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=_parent(out)))
    try:
        b = params.settings("base").written()
        t = b["tiny"]
        build_base(work / "base", seed=int(b["seed"]), vocab_size=int(t["vocab_size"]),
                   max_context=int(t["max_context"]), arch=dict(t["arch"]), stdlib_files=int(t["stdlib_files"]),
                   corpus_episodes=int(t["corpus_episodes"]),
                   context_tasks=(context_tasks or [])[: int(t["corpus_context_tasks"])])
        sec = params.settings("teacher").written()
        if not context_tasks:
            sec = {**sec, "context_episodes": 0}
        items = teacher_items(sec, context_tasks or [])
        workers = int(sec["workers"])
        with SandboxPool(sandbox_config, max_concurrent=workers) as pool:
            records = run_teacher(items, agent_config(params, sandbox=sandbox_config), pool=pool,
                                  model_for=lambda it: ScriptedModel(it.replies, name="teacher"),
                                  min_reward=float(sec["min_reward"]), workers=workers)
        write_jsonl(work / RECORDS, records)
        manifest = {"kind": "tiny-teacher", "episodes": len(records),
                    "successful": sum(bool(r["teacher"]["success"]) for r in records),
                    "backend": sandbox_config.backend, "image": sandbox_config.image or sandbox_config.rootfs}
        log.info("tiny agent: %d teacher episodes, %d successful", manifest["episodes"], manifest["successful"])
        (work / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        replace_dir(work, out)  # 0755, not mkdtemp's 0700: readable as the cache's other folders are
        return manifest
    finally:
        shutil.rmtree(work, ignore_errors=True)


def teacher_records(teacher_dir: str | Path) -> list[dict[str, Any]]:
    """The records of a :func:`build_teacher` folder, in the teacher's order."""
    return read_jsonl(Path(teacher_dir) / RECORDS, mode="strict")


def train_agent(teacher_dir: str | Path, sft: SftSection, out: str | Path) -> dict[str, Any]:
    """SFT of ``teacher_dir``'s base on its successful records with the ``sft`` section into ``out``;
    returns the SFT manifest (with the teacher's episode counts)."""
    # lazy: loads torch; importing this module does not
    from lis.train.sft.stage import run_sft_stage

    teacher_dir, out = Path(teacher_dir), Path(out)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=_parent(out)))
    try:
        manifest = run_sft_stage(sft, teacher_dir / "base", teacher_records(teacher_dir), work / "sft",
                                 section_name="tiny-agent")
        t = json.loads((teacher_dir / "manifest.json").read_text())
        manifest["teacher"] = {"episodes": t["episodes"], "successful": t["successful"]}
        (work / "sft" / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        replace_dir(work / "sft", out)
        return manifest
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build_tiny_agent(out: str | Path, params, sandbox_config, context_tasks: list | None = None) -> dict[str, Any]:
    """Base, teacher and SFT with ``params`` (sections base, teacher, sft, agent) into ``out``;
    the teacher runs in sandboxes of ``sandbox_config``. Returns the SFT manifest."""
    out = Path(out)
    work = Path(tempfile.mkdtemp(prefix=".tiny-agent.", dir=_parent(out)))
    try:
        build_teacher(work / "teacher", params, sandbox_config, context_tasks)
        return train_agent(work / "teacher", params.settings("sft"), out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- the cache -------------------------------------------------------------------------------------------
def teacher_key(params, sandbox_config, *, root: Path | None = None) -> str:
    """What decides the base and the teacher's records (module doc); :data:`TEACHER_CODE` is read under
    ``root`` (default: this package's checkout)."""
    rootfs = sandbox_config.rootfs
    return hash_obj({
        "sections": {s: params.settings(s).written() for s in TEACHER_SECTIONS},
        "sandbox": {"backend": sandbox_config.backend, "image": sandbox_config.image,
                    "rootfs": Path(rootfs).name if rootfs else ""},  # named by the image's content hash
        "code": code_version(*TEACHER_CODE, root=root),
        "samples": hash_tree(samples_dir()) if samples_dir().is_dir() else None,
        "versions": package_versions(("torch", "transformers", "tokenizers")) | {"python": platform.python_version()},
    })


def agent_key(sft: SftSection, teacher_dir: str | Path, *, root: Path | None = None) -> str:
    """What decides the agent's weights (module doc): the base's files but not its manifest (build times),
    :func:`sft_data_digest`, the sft settings, :data:`SFT_CODE` under ``root`` and the library versions."""
    teacher_dir = Path(teacher_dir)
    libs = ("torch", "transformers", "pytorch_lightning") + (("peft",) if sft.lora.rank else ())
    return hash_obj({
        "base": {p.name: sha256_file(p) for p in sorted((teacher_dir / "base").iterdir())
                 if p.is_file() and p.name != "manifest.json"},
        "data": sft_data_digest(teacher_dir / "base", teacher_records(teacher_dir)),
        "sft": sft.model_dump(),
        "code": code_version(*SFT_CODE, root=root),
        "versions": package_versions(libs) | {"python": platform.python_version()},
    })


def sft_data_digest(base_dir: str | Path, records: list[dict[str, Any]]) -> str:
    """Digest of what SFT trains on: the successful records' ids and labels as SFT encodes them with the
    base's tokenizer, in order; skipped records and unread fields (times, ids) do not count."""
    from transformers import AutoTokenizer

    from lis.train.sft.data import encode, record_episode
    from lis.train.sft.stage import successful_records

    tokenizer = AutoTokenizer.from_pretrained(base_dir)
    h = hashlib.sha256()
    for rec in successful_records(records):
        ep = record_episode(rec)
        try:
            ex = encode(tokenizer, ep.messages, ep.tools)
            h.update(json.dumps([ex.ids, ex.labels], separators=(",", ":")).encode())
        except ValueError:
            h.update(b"unaligned")
        h.update(b"\n")
    return h.hexdigest()[:16]


def cached_teacher(params, sandbox_config) -> Path:
    """The base and teacher records of ``params`` built once into the cache folder (a lock lets one
    process build while others wait); returns the folder."""
    from filelock import FileLock

    folder = cache_dir() / "models" / f"tiny-teacher-{teacher_key(params, sandbox_config)}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder.parent / f".{folder.name}.lock")):
        if not (folder / "manifest.json").is_file():
            log.info("running the tiny agent's teacher into %s", folder)
            build_teacher(folder, params, sandbox_config)
    return folder


def cached_tiny_agent(params, sandbox_config) -> Path:
    """The tiny agent of ``params`` built once into the cache folder (:func:`cached_teacher`, then SFT unless
    an agent of the same key is there; a lock lets one process train while others wait)."""
    from filelock import FileLock

    teacher = cached_teacher(params, sandbox_config)
    seen = hash_obj({"teacher": str(teacher), "sft": params.settings("sft").written()})  # this process found it before
    if seen in _FOUND and (_FOUND[seen] / "manifest.json").is_file():
        return _FOUND[seen]
    folder = cache_dir() / "models" / f"tiny-agent-{agent_key(params.settings('sft'), teacher)}"
    with FileLock(str(folder.parent / f".{folder.name}.lock")):
        if not (folder / "manifest.json").is_file():
            log.info("training the tiny agent into %s", folder)
            train_agent(teacher, params.settings("sft"), folder)
    _FOUND[seen] = folder
    return folder


_FOUND: dict[str, Path] = {}


def _parent(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    return out.parent

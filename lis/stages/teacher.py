"""The ``teacher`` stage: the teacher's episodes in the real sandbox (params ``teacher``, with the
``agent`` and ``sandbox`` settings of evaluation), the SFT data of the smoke profile.

An interrupted run keeps the episodes it finished.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lis.agent.trajectory import INTERRUPTED
from lis.config.training import TeacherSection
from lis.errors import LisError
from lis.manifest import read_image_manifest, stage_manifest, write_json
from lis.models.scripted import ScriptedModel
from lis.offline.teacher.items import teacher_items
from lis.offline.teacher.run import run_teacher
from lis.params import Params
from lis.runtime import agent_config, chat_model, sandbox_config
from lis.sandbox import registry
from lis.sandbox.pool import SandboxPool
from lis.stages.spec import Stage
from lis.tasks.io import read_tasks
from lis.util.hashing import hash_obj
from lis.util.jsonl import append_jsonl, read_jsonl, write_jsonl
from lis.util.progress import Progress

STAGE = Stage(
    name="teacher",
    title="Teacher episodes in the sandbox",
    priority=50,
    cmd=("lis train teacher --out data/train/teacher --context-tasks data/train/context/files.jsonl "
         "--image-manifest data/image/manifest.json --profile ${profile} --log logs/train/teacher.log"),
    params=("teacher", "agent", "sandbox", "models"),
    deps=("data/train/context/files.jsonl", "data/image/manifest.json", "${tasks.samples_dir}"),
    outs=("data/train/teacher/trajectories.jsonl", "data/train/teacher/manifest.json"),
)

log = logging.getLogger("lis.offline.teacher")
HELP = {
    "out": "Folder for trajectories.jsonl and manifest.json.",
    "context_tasks": "Training context tasks the teacher solves.",
    "image_manifest": "The image stage's manifest.",
}


@dataclass(frozen=True)
class Settings:
    """One run of the stage (:func:`resolve`): the params the agent, the sandbox and a teacher model are
    built from (``agent``, ``sandbox``, ``models``), and the ``teacher`` section typed."""

    params: Params
    teacher: TeacherSection


def resolve(params: Params) -> Settings:
    """The settings from the params. Raises ParamsError naming a bad key or value of ``teacher``, LisError
    when ``teacher.model`` is neither ``scripted`` nor a models entry."""
    teacher = params.settings("teacher")
    if teacher.model != "scripted" and teacher.model not in params.settings("models"):
        raise LisError(f"teacher.model {teacher.model!r} is not a models entry", "name an entry of models:")
    return Settings(params=params, teacher=teacher)


def run(settings: Settings, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict[str, Any]:
    """The teacher's episodes into ``outputs["out"]`` (``trajectories.jsonl``, in the teacher's order, and
    ``manifest.json``, which is returned). ``inputs``: ``context_tasks`` (the training context tasks the
    teacher solves; absent is an error only when ``teacher.context_episodes`` asks for some) and
    ``image_manifest`` (the image stage's manifest)."""
    t0 = time.monotonic()
    params, out = settings.params, outputs["out"]
    sec = params.settings("teacher").written()  # as written: what the manifest and the resume key hash
    rows = []
    if inputs["context_tasks"].is_file():
        rows = read_tasks(inputs["context_tasks"])
    elif settings.teacher.context_episodes:
        raise LisError(f"no context tasks at {inputs['context_tasks']}", "run the context_tasks stage first")
    sb_cfg = sandbox_config(params, run_id=registry.RUN_ID, image_manifest=read_image_manifest(inputs["image_manifest"]),
                            backend=settings.teacher.sandbox_backend)
    # the evaluation's agent settings (observation format, limits), under the teacher's turn limits
    cfg = agent_config(params, sandbox=sb_cfg)
    if settings.teacher.model == "scripted":
        items = teacher_items(sec, rows)

        def model_for(item):
            return ScriptedModel(item.replies, name="teacher")
    else:  # a models entry answers by itself: the same tasks, no scripted replies
        shared = chat_model(params, settings.teacher.model)
        items = [dataclasses.replace(it, replies=None) for it in teacher_items(sec, rows)]

        def model_for(item):
            return shared
    workers = settings.teacher.workers
    out.mkdir(parents=True, exist_ok=True)
    path = out / "trajectories.jsonl"
    # the episodes an interrupted run of these same items finished (its partial file, named by what
    # decides the episodes: settings, tasks, image, agent), kept; another run's partial file is dropped
    key = hash_obj({"teacher": sec, "tasks": [t.to_dict() for t in rows], "image": sb_cfg.image or sb_cfg.rootfs,
                    "agent": params.settings("agent").written()})
    tmp = out / f".trajectories.{key}.jsonl.tmp"
    for stale in out.glob(".trajectories.*.tmp"):
        if stale != tmp:
            stale.unlink(missing_ok=True)
    done = _finished(tmp, len(items))
    if done:
        log.info("teacher: %d of %d episodes kept from the interrupted run (%s)", len(done), len(items), tmp.name)
    bar = Progress("teacher", len(items), done=len(done))
    with SandboxPool(sb_cfg, max_concurrent=workers, warm=min(workers, 2)) as pool:
        records = run_teacher(items, cfg, pool=pool, model_for=model_for, min_reward=settings.teacher.min_reward,
                              workers=workers, on_done=lambda d: (append_jsonl(tmp, d), bar.advance()), done=done)
    bar.close()
    records.sort(key=lambda d: d["teacher"]["index"])
    write_jsonl(path, records)  # atomically, in teacher order (tmp holds them in finishing order)
    tmp.unlink(missing_ok=True)
    by_source: dict[str, Counter] = {}
    for d in records:
        c = by_source.setdefault(d["teacher"]["source"], Counter())
        c["episodes"] += 1
        c["successful"] += d["teacher"]["success"]
    terminations = Counter(d["termination"] for d in records)
    manifest = stage_manifest("teacher", params.root, params.profile, hash_obj(sec), time.monotonic() - t0,
                              episodes=len(records), successful=sum(d["teacher"]["success"] for d in records),
                              by_source={k: dict(v) for k, v in by_source.items()}, terminations=dict(terminations),
                              model=sec["model"], image=sb_cfg.image or sb_cfg.rootfs)
    write_json(out / "manifest.json", manifest)
    log.info("teacher: %d episodes, %d successful (%s)", manifest["episodes"], manifest["successful"],
             ", ".join(f"{k} {v['successful']}/{v['episodes']}" for k, v in manifest["by_source"].items()))
    return manifest


def _finished(tmp: Path, n: int) -> dict[int, dict[str, Any]]:
    """index → record of the episodes a partial file holds that finished (not interrupted; a torn
    last line, from a kill mid-write, is skipped)."""
    if not tmp.is_file():
        return {}
    out: dict[int, dict[str, Any]] = {}
    for d in read_jsonl(tmp, mode="tolerant"):
        index = (d.get("teacher") or {}).get("index") if isinstance(d.get("teacher"), dict) else None
        if isinstance(index, int) and 0 <= index < n and d.get("termination") != INTERRUPTED:
            out[index] = d
    return out

"""The ``teacher`` stage: which episodes the teacher runs, and their records and manifest."""
from __future__ import annotations

import logging
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

from lis.agent.trajectory import INTERRUPTED
from lis.context_tasks import episode_mode
from lis.errors import LisError
from lis.manifest import read_image_manifest, stage_manifest, write_json
from lis.models.scripted import ScriptedModel
from lis.runtime import agent_config, chat_model, sandbox_config
from lis.sandbox import registry
from lis.sandbox.pool import SandboxPool
from lis.tasks.io import read_tasks
from lis.offline.teacher.context_plans import plan as context_plan
from lis.offline.teacher.run import run_teacher, scripted_item, solved_vanilla_item
from lis.offline.teacher.tasks import sample_tasks
from lis.util.hashing import hash_obj
from lis.util.jsonl import append_jsonl, read_jsonl, write_jsonl
from lis.util.progress import Progress

log = logging.getLogger("lis.offline.teacher")


def teacher_items(sec: dict[str, Any], context_tasks: list) -> list:
    """The scripted teacher's episodes: ``benchmark_episodes`` drawn over every domain and mode (the
    form of an episode), then ``context_episodes`` of the training context tasks (solved, in the mode
    their variant runs in), then ``vanilla_context_episodes`` of them answered directly (the documents
    in the prompt, no tools: the LLM-RL baseline's mode; drawn apart from the others)."""
    # lazy: loads torch; importing this module does not
    from lis.offline.teacher.episodes import draw

    rng = random.Random(int(sec["seed"]))
    samples = sample_tasks()
    items = []
    for _ in range(int(sec["benchmark_episodes"])):
        task, mode = draw(rng, samples)
        items.append(scripted_item(task, mode, rng, "benchmark"))
    if context_tasks and int(sec["context_episodes"]):
        chosen = [context_tasks[i % len(context_tasks)] for i in rng.sample(range(len(context_tasks)),
                                                                            min(len(context_tasks),
                                                                                int(sec["context_episodes"])))]
        items += [scripted_item(t, episode_mode(t), rng, "context", planner=context_plan) for t in chosen]
    n_vanilla = int(sec.get("vanilla_context_episodes") or 0)
    if context_tasks and n_vanilla:
        picks = rng.sample(range(len(context_tasks)), min(len(context_tasks), n_vanilla))
        items += [solved_vanilla_item(context_tasks[i]) for i in picks]
    return items


def run_teacher_stage(params, out: Path, context_tasks_path: Path, image_manifest: Path) -> dict[str, Any]:
    t0 = time.monotonic()
    sec = params.section("teacher")
    rows = []
    if context_tasks_path.is_file():
        rows = read_tasks(context_tasks_path)
    elif int(sec["context_episodes"]):
        raise LisError(f"no context tasks at {context_tasks_path}", "run the context_tasks stage first")
    sb_cfg = sandbox_config(params, run_id=registry.RUN_ID, image_manifest=read_image_manifest(image_manifest),
                            backend=sec.get("sandbox_backend"))
    # the evaluation's agent settings (observation format, limits), under the teacher's turn limits
    cfg = agent_config(params, sandbox=sb_cfg)
    if sec["model"] == "scripted":
        items = teacher_items(sec, rows)

        def model_for(item):
            return ScriptedModel(item.replies, name="teacher")
    else:  # a models entry answers by itself: the same tasks, no scripted replies
        if sec["model"] not in params.section("models"):
            raise LisError(f"teacher.model {sec['model']!r} is not a models entry", "name an entry of models:")
        shared = chat_model(params, sec["model"])
        items = [dataclass_replace(it, replies=None) for it in teacher_items(sec, rows)]

        def model_for(item):
            return shared
    workers = int(sec["workers"])
    out.mkdir(parents=True, exist_ok=True)
    path = out / "trajectories.jsonl"
    # the episodes an interrupted run of these same items finished (its partial file, named by what
    # decides the episodes: settings, tasks, image, agent), kept; another run's partial file is dropped
    key = hash_obj({"teacher": sec, "tasks": [t.to_dict() for t in rows], "image": sb_cfg.image or sb_cfg.rootfs,
                    "agent": params.section("agent")})
    tmp = out / f".trajectories.{key}.jsonl.tmp"
    for stale in out.glob(".trajectories.*.tmp"):
        if stale != tmp:
            stale.unlink(missing_ok=True)
    done = _finished(tmp, len(items))
    if done:
        log.info("teacher: %d of %d episodes kept from the interrupted run (%s)", len(done), len(items), tmp.name)
    bar = Progress("teacher", len(items), done=len(done))
    with SandboxPool(sb_cfg, max_concurrent=workers, warm=min(workers, 2)) as pool:
        records = run_teacher(items, cfg, pool=pool, model_for=model_for, min_reward=float(sec["min_reward"]),
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


def dataclass_replace(obj, **kw):
    import dataclasses

    return dataclasses.replace(obj, **kw)

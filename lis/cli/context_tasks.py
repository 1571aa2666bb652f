"""``lis context-tasks``: the RL training set — context tasks of the train split, three variants, a manifest.

    lis context-tasks --out-dir data/train/context --profile smoke   # the pipeline's stage
    lis context-tasks --out-dir /tmp/ctx --profile ci -v

Writes ``<out-dir>/files.jsonl`` (documents as files: LLM-in-Sandbox-RL), ``<out-dir>/prompt.jsonl``
(the same tasks, documents in the prompt: mode ``sandbox_inline``), ``<out-dir>/math.jsonl``
(generated math problems) and ``<out-dir>/manifest.json`` (counts, qa_type mix, seed, source, knobs,
content hashes). Reads only the ``tasks`` params (``tasks.context``). The held-out split of the
same construction is the task set ``lis tasks --domain instruct_pretrain`` writes (source
``generated``).
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.context_tasks import build_splits, qa_mix, settings_from, variants
from lis.manifest import stage_manifest, write_json
from lis.tasks import write_tasks
from lis.util.files import sha256_file
from lis.util.hashing import hash_obj
from lis.util.log import setup_logging

log = logging.getLogger("lis.context_tasks")

Out = typer.Option(Path(layout.CONTEXT_DIR), "--out-dir", "--out", "-o",
                   help="Folder for files.jsonl, prompt.jsonl, math.jsonl and manifest.json.")


def context_tasks(out: Path = Out, profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
                  log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Build the training context tasks (train split) of every data variant from params `tasks.context`.

    Source generated (offline, seeded), seed (the Instruction Pre-Training seed rows, from the hub
    or a local JSONL) or paper (the authors' constructed set on the hub). An unreachable hub ends
    in a one-line error; a bad knob names its key.
    """

    setup_logging(log_file, verbose)
    t0 = time.monotonic()
    p = load_params(profile, params_file)
    sec = p.section("tasks").get("context") or {}
    s = settings_from(sec)
    splits = build_splits(s, p.root)
    sets = variants(splits.train, s.seed, s.math_tasks)
    described = {}
    for name, tasks in sets.items():
        path = write_tasks(out / f"{name}.jsonl", tasks)
        described[name] = {"file": path.name, "count": len(tasks), "sha256": sha256_file(path),
                           "qa_mix": qa_mix(tasks), "qa_types": _count(t.qa_type for t in tasks),
                           "domains": _count(t.domain for t in tasks)}
        log.info("%s: %d tasks %s", path, len(tasks), described[name]["qa_mix"])
    held_ids = sorted({str(t.meta.get("context_id")) for t in splits.held_out})
    manifest = stage_manifest(
        "context_tasks", p.root, p.profile, hash_obj({"tasks.context": sec}), time.monotonic() - t0,
        source=s.source, seed=s.seed, knobs=s.knobs(), source_facts=splits.facts, variants=described,
        split="train", held_out={"tasks": len(splits.held_out), "contexts": len(held_ids),
                                 "context_ids_sha256": hash_obj(held_ids, 64)},
        content_sha256=hash_obj({k: v["sha256"] for k, v in described.items()}, 64))
    write_json(out / "manifest.json", manifest)
    counts = ", ".join(f"{k} {v['count']}" for k, v in described.items())
    typer.echo(f"wrote {counts} tasks to {out}")


def _count(values) -> dict[str, int]:
    from collections import Counter

    return dict(sorted(Counter(str(v) for v in values).items()))

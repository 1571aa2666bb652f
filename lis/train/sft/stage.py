"""SFT on the successful records of a producer: the ``sft`` stage's training (lis/stages/sft.py), the test
suite's tiny agent (lis/train/tiny_agent.py), and RFT (the same training on the policy's own successful episodes)."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from lis.train.plan import check_run
from lis.config.training import SftSection
from lis.train.sft.run import train_sft
from lis.util.hashing import hash_obj, hash_tree
from lis.util.log import console

log = logging.getLogger("lis.train.sft")

CHECKPOINTS = Path("data/train/checkpoints")  # outside every declared output: survives a killed run


def successful_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records to train on: those the producer marked successful (``teacher.success``)."""
    return [r for r in records if (r.get("teacher") or {}).get("success")]


def run_sft_stage(settings: SftSection, base_dir: Path, records: list[dict[str, Any]], out: Path,
                  section_name: str = "sft") -> dict[str, Any]:
    """Fine-tune ``base_dir`` on the successful ``records`` into ``out``. Checkpoints are kept under
    data/train/checkpoints/<stage>-<hash of settings, base and data> until the model is written."""
    if settings.steps:  # will it fit? one line naming the largest term and its knob, before any work
        check_run(settings, "sft", base_dir)
    chosen = successful_records(records)
    log.info("%s: %d of %d records successful, training on them", section_name, len(chosen), len(records))
    key = hash_obj({"settings": settings.model_dump(), "base": hash_tree(base_dir) if base_dir.is_dir() else None,
                    "data": [r.get("episode_id") or r.get("task_id") for r in chosen]})
    return train_sft(base_dir, chosen, out, settings, ckpt_dir=CHECKPOINTS / f"{section_name}-{key}",
                     progress=console.is_terminal)

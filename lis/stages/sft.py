"""The ``sft`` stage: SFT warm start (PyTorch Lightning) on the teacher's successful episodes, and the
command that ``sft_replicate`` runs too (with a seed offset).

The training itself is :func:`lis.train.sft.stage.run_sft_stage`, which the test suite's tiny agent runs too.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lis.config.training import SftSection
from lis.errors import LisError
from lis.params import Params
from lis.stages.spec import Option, Stage
from lis.util.jsonl import read_jsonl

STAGE = Stage(
    name="sft",
    title="SFT warm start (Lightning)",
    priority=50,
    threads="sft.threads",
    cmd=("lis train sft --base data/models/base --data data/train/teacher/trajectories.jsonl --out "
         "data/models/sft --profile ${profile} --log logs/train/sft.log"),
    params=("sft",),
    deps=("data/models/base", "data/train/teacher/trajectories.jsonl"),
    outs=("data/models/sft",),
)

OPTIONS = (Option("--seed-offset", "Train with seed sft.seed + N (a replicate of the learning check).", int, 0,
                  low=0, high=1000000),)
HELP = {"base": "The model to fine-tune.", "data": "Trajectory records; the successful ones are trained on.",
        "out": "Folder to write the fine-tuned model into."}


def resolve(params: Params, seed_offset: int = 0) -> SftSection:
    """The ``sft`` section of a run trained with seed ``sft.seed + seed_offset`` (a replicate of the
    learning check). Raises ParamsError naming a bad key or value of ``sft``."""
    sft = params.settings("sft")
    return sft.model_copy(update={"seed": sft.seed + seed_offset})


def run(sft: SftSection, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict[str, Any]:
    """Fine-tune ``inputs["base"]`` on the successful records of ``inputs["data"]`` (trajectories, read
    strictly: a corrupt row is one error line naming the file and the line) into ``outputs["out"]``;
    return the model's manifest (``{"written": False, ...}`` on a DDP rank other than 0)."""
    from lis.train.sft.stage import run_sft_stage  # lazy: loads torch; --help and `lis pipeline check` do not

    data = inputs["data"]
    if not data.is_file():
        raise LisError(f"no trajectories at {data}", "run the stage that produces it first (snakemake --cores all paper)")
    records = read_jsonl(data, mode="strict", hint="rerun the stage that writes it (snakemake --cores all paper)")
    return run_sft_stage(sft, inputs["base"], records, outputs["out"], section_name="sft")


def summary(manifest: dict[str, Any]) -> str:
    """What the terminal shows (nothing on a DDP rank other than 0: rank 0 wrote the model and says so)."""
    if not manifest.get("written", True):
        return ""
    return json.dumps({k: manifest[k] for k in ("steps_done", "loss", "data", "world_size", "ranks", "wall_s")}, indent=1)

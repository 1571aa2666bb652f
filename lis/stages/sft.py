"""The ``sft`` stage: SFT warm start (Lightning)."""
from __future__ import annotations

from lis.stages.spec import TRAIN_CODE, Stage

STAGE = Stage(
    name="sft",
    cmd=("lis train sft --base data/models/base --data data/train/teacher/trajectories.jsonl --out "
         "data/models/sft --profile ${profile} --log logs/train/sft.log"),
    entry="lis.cli.train:sft",
    params=("sft",),
    deps=("data/models/base", "data/train/teacher/trajectories.jsonl"),
    code=(*TRAIN_CODE, "lis/cli/train.py"),
    outs=("data/models/sft",),
)

"""The ``base`` stage: Base model (<profile>)."""
from __future__ import annotations

from lis.stages.spec import TRAIN_CODE, Stage

STAGE = Stage(
    name="base",
    cmd=("lis train base --out data/models/base --context-tasks data/train/context/files.jsonl "
         "--profile ${profile} --log logs/train/base.log"),
    entry="lis.cli.train:base",
    params=("base",),
    deps=("data/train/context/files.jsonl", "${tasks.samples_dir}"),
    code=(*TRAIN_CODE, "lis/cli/train.py"),
    outs=("data/models/base",),
)

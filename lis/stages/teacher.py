"""The ``teacher`` stage: Teacher episodes in the sandbox."""
from __future__ import annotations

from lis.stages.spec import TRAIN_CODE, Stage

STAGE = Stage(
    name="teacher",
    cmd=("lis train teacher --out data/train/teacher --context-tasks data/train/context/files.jsonl "
         "--image-manifest data/image/manifest.json --profile ${profile} --log logs/train/teacher.log"),
    entry="lis.cli.train:teacher",
    params=("teacher", "agent", "sandbox", "models"),
    deps=("data/train/context/files.jsonl", "data/image/manifest.json", "${tasks.samples_dir}"),
    code=(*TRAIN_CODE, "lis/cli/train.py"),
    outs=("data/train/teacher/trajectories.jsonl", "data/train/teacher/manifest.json"),
)

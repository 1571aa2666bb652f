"""The ``grpo`` stage: GRPO in the sandbox on the <variant> variant."""
from __future__ import annotations

from lis.stages.spec import TRAIN_CODE, Plot, Stage

STAGE = Stage(
    name="grpo",
    foreach="${jobs.grpo_data}",
    cmd=("lis train grpo --init data/models/sft --data ${item} --out data/models/grpo-${item} --logs "
         "data/train/runs/grpo-${item} --image-manifest data/image/manifest.json --profile ${profile} "
         "--log logs/train/grpo-${item}.log"),
    entry="lis.cli.train:grpo",
    params=("grpo", "agent", "sandbox"),
    deps=("data/models/sft", "data/train/context/${item}.jsonl", "data/image/manifest.json"),
    code=(*TRAIN_CODE, "lis/cli/train.py"),
    outs=("data/models/grpo-${item}",),
    metrics=("data/train/runs/grpo-${item}/metrics.json",),
    plots=(Plot("data/train/runs/grpo-${item}/train_log.csv", x="step", y="reward_mean"),),
)

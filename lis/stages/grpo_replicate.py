"""The ``grpo_replicate`` stage: Learning check, replicate <replicate>: GRPO on files (seed grpo.seed +
<replicate>)."""
from __future__ import annotations

from lis.stages.spec import Plot, Stage

STAGE = Stage(
    name="grpo_replicate",
    item="replicate",
    title="Learning check, replicate ${item}: GRPO on files (seed grpo.seed + ${item})",
    priority=30,
    threads="grpo.threads",
    foreach="${jobs.replicates}",
    cmd=("lis train grpo --init data/models/replicates/r${item}/sft --data files --out "
         "data/models/replicates/r${item}/grpo-files --logs "
         "data/train/runs/replicates/r${item}/grpo-files --seed-offset ${item} --image-manifest "
         "data/image/manifest.json --profile ${profile} --log logs/replicates/r${item}/grpo-files.log"),
    runs="grpo",
    params=("grpo", "agent", "sandbox"),
    deps=("data/models/replicates/r${item}/sft", "data/train/context/files.jsonl", "data/image/manifest.json"),
    outs=("data/models/replicates/r${item}/grpo-files",),
    metrics=("data/train/runs/replicates/r${item}/grpo-files/metrics.json",),
    plots=(Plot("data/train/runs/replicates/r${item}/grpo-files/train_log.csv", x="step", y="reward_mean"),),
)

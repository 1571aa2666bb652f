"""The ``sft_replicate`` stage: Learning check, replicate <replicate>: SFT (seed sft.seed + <replicate>)."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="sft_replicate",
    item="replicate",
    title="Learning check, replicate ${item}: SFT (seed sft.seed + ${item})",
    priority=30,
    threads="sft.threads",
    comment=(
        "The learning check over seeds (jobs.replicates, empty by default): replicate r repeats",
        "SFT (sft.seed + r) -> GRPO on files (grpo.seed + r) -> held-out evaluation under data/{models,train/runs,eval}/replicates/r<r>/.",
    ),
    foreach="${jobs.replicates}",
    cmd=("lis train sft --base data/models/base --data data/train/teacher/trajectories.jsonl --out "
         "data/models/replicates/r${item}/sft --seed-offset ${item} --profile ${profile} --log "
         "logs/replicates/r${item}/sft.log"),
    runs="sft",
    params=("sft",),
    deps=("data/models/base", "data/train/teacher/trajectories.jsonl"),
    outs=("data/models/replicates/r${item}/sft",),
)

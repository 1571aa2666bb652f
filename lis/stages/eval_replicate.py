"""The ``eval_replicate`` stage: Learning check, replicate <replicate>: <model> on the held-out context tasks."""
from __future__ import annotations

from lis.stages.spec import EVAL_PARAMS, Stage

STAGE = Stage(
    name="eval_replicate",
    title="Learning check, replicate ${item.replicate}: ${item.model} on the held-out context tasks",
    matrix={"replicate": "${jobs.replicates}", "model": ["sft", "grpo-files"]},
    cmd=("lis eval run --model ${item.model} --model-path "
         "data/models/replicates/r${item.replicate}/${item.model} --domain instruct_pretrain --mode "
         "sandbox --out "
         "data/eval/replicates/r${item.replicate}/${item.model}/instruct_pretrain/sandbox --profile "
         "${profile} --log logs/replicates/r${item.replicate}/eval-${item.model}.log"),
    runs="evaluation",
    params=("sandbox", *EVAL_PARAMS),
    deps=(
        "data/tasks/instruct_pretrain.jsonl", "data/models/replicates/r${item.replicate}/${item.model}",
        "data/image/manifest.json",
    ),
    outs=("data/eval/replicates/r${item.replicate}/${item.model}/instruct_pretrain/sandbox/trajectories.jsonl",),
    metrics=("data/eval/replicates/r${item.replicate}/${item.model}/instruct_pretrain/sandbox/metrics.json",),
)

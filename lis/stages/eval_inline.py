"""The ``eval_inline`` stage: Eval <model> / long_context / documents in the prompt (Table 3)."""
from __future__ import annotations

from lis.stages.spec import EVAL_PARAMS, Stage

STAGE = Stage(
    name="eval_inline",
    item="model",
    title="Eval ${item} / long_context / documents in the prompt (Table 3)",
    foreach="${jobs.long_context_ablation}",
    cmd=("lis eval run --model ${item} --domain long_context --mode sandbox_inline --profile "
         "${profile} --log logs/eval/${item}/long_context/sandbox_inline.log"),
    runs="evaluation",
    params=("sandbox", *EVAL_PARAMS),
    deps=("data/tasks/long_context.jsonl", "data/models/${item}", "data/image/manifest.json"),
    outs=("data/eval/${item}/long_context/sandbox_inline/trajectories.jsonl",),
    metrics=("data/eval/${item}/long_context/sandbox_inline/metrics.json",),
)

"""The ``eval_vanilla`` stage: Eval <model> / <domain> / vanilla."""
from __future__ import annotations

from lis.stages.spec import EVAL_PARAMS, Stage

STAGE = Stage(
    name="eval_vanilla",
    title="Eval ${item.model} / ${item.domain} / vanilla",
    matrix={"model": "${jobs.models}", "domain": "${jobs.domains}"},
    cmd=("lis eval run --model ${item.model} --domain ${item.domain} --mode vanilla --profile "
         "${profile} --log logs/eval/${item.model}/${item.domain}/vanilla.log"),
    runs="evaluation",
    params=EVAL_PARAMS,
    deps=("data/tasks/${item.domain}.jsonl", "data/models/${item.model}"),
    outs=("data/eval/${item.model}/${item.domain}/vanilla/trajectories.jsonl",),
    metrics=("data/eval/${item.model}/${item.domain}/vanilla/metrics.json",),
)

"""The ``eval_sandbox`` stage: Eval <model> / <domain> / sandbox."""
from __future__ import annotations

from lis.stages.spec import EVAL_PARAMS, Stage

STAGE = Stage(
    name="eval_sandbox",
    title="Eval ${item.model} / ${item.domain} / sandbox",
    matrix={"model": "${jobs.models}", "domain": "${jobs.domains}"},
    cmd=("lis eval run --model ${item.model} --domain ${item.domain} --mode sandbox --profile "
         "${profile} --log logs/eval/${item.model}/${item.domain}/sandbox.log"),
    runs="evaluation",
    params=("sandbox", *EVAL_PARAMS),
    deps=("data/tasks/${item.domain}.jsonl", "data/models/${item.model}", "data/image/manifest.json"),
    outs=("data/eval/${item.model}/${item.domain}/sandbox/trajectories.jsonl",),
    metrics=("data/eval/${item.model}/${item.domain}/sandbox/metrics.json",),
)

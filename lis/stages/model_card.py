"""The ``model_card`` stage: Model card of <name>."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="model_card",
    foreach="${jobs.external}",
    cmd=("lis model card --model ${item} --out data/models/${item} --profile ${profile} --log "
         "logs/models/${item}.log"),
    entry="lis.cli.model:card",
    params=("models",),
    code=("lis/paths.py", "lis/agent", "lis/models", "lis/runtime", "lis/sandbox", "lis/cli/model.py"),
    outs=("data/models/${item}",),
)

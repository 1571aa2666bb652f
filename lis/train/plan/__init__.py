"""Will it fit? Memory per process and disk per checkpoint of the SFT and GRPO stages, from shapes alone.

    lis train plan --profile full                       # Qwen3-4B: the paper's 8 x 80 GB and one 80 GB GPU
    lis train plan --profile full --gpus 1 --gpu-memory-gb 80     # one plain process: refused, one line
    lis train plan --measure data/models/base           # the estimate against measured peaks (CPU)

    from lis.train.plan import check_run
    metrics["memory_plan"] = check_run(params.settings("grpo"), "grpo", init_dir)   # at a stage's start

The formula is documented in :mod:`.memory`; docs/training-plan.md has the numbers.
"""
from lis.train.plan.check import check_run, plan_stage, plan_stages, refusal, stage_setup
from lis.train.plan.memory import GB, SFT_LOGITS_CHUNK, Plan, Term, Workload, estimate, layer_saved_bytes, workload
from lis.train.plan.setups import Setup, default_setups, from_env, plain, read_accelerate
from lis.train.plan.shapes import ModelShape, read_shape, resolve_model
from lis.train.plan.table import plans_json, render

__all__ = ["GB", "SFT_LOGITS_CHUNK", "ModelShape", "Plan", "Setup", "Term", "Workload", "check_run",
           "default_setups", "estimate", "from_env", "layer_saved_bytes", "plain", "plan_stage", "plan_stages",
           "plans_json", "read_accelerate", "read_shape", "refusal", "render", "resolve_model", "stage_setup",
           "workload"]

"""The ``llm_rl`` stage: LLM-RL baseline (context in the prompt, no tools)."""
from __future__ import annotations

from lis.stages.spec import Plot, Stage

STAGE = Stage(
    name="llm_rl",
    title="LLM-RL baseline (context in the prompt, no tools)",
    threads="grpo.threads",
    cmd=("lis train grpo --mode vanilla --init data/models/sft --data files --out data/models/llm-rl "
         "--logs data/train/runs/llm-rl --image-manifest data/image/manifest.json --profile ${profile} "
         "--log logs/train/llm-rl.log"),
    runs="grpo",
    params=("grpo", "llm_rl", "agent", "sandbox"),
    deps=("data/models/sft", "data/train/context/files.jsonl", "data/image/manifest.json"),
    outs=("data/models/llm-rl",),
    metrics=("data/train/runs/llm-rl/metrics.json",),
    plots=(Plot("data/train/runs/llm-rl/train_log.csv", x="step", y="reward_mean"),),
)

"""The ``throughput`` stage: Queries per minute, vanilla vs sandbox."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="throughput",
    cmd=("lis throughput --image-manifest data/image/manifest.json --tasks-dir data/tasks --out "
         "data/bench/throughput.json --profile ${profile} --log logs/bench/throughput.log"),
    entry="lis.cli.throughput:throughput",
    params=("throughput", "models", "agent", "sandbox", "image"),
    deps=("data/tasks", "data/models/${throughput.model}", "data/image/manifest.json"),
    code=(
        "lis/paths.py", "lis/agent", "lis/models", "lis/prompts", "lis/runtime", "lis/sandbox", "lis/tasks",
        "lis/bench/__init__.py", "lis/bench/throughput.py", "lis/analysis/__init__.py",
        "lis/analysis/efficiency_stats.py", "lis/analysis/efficiency_tokens.py", "lis/cli/throughput.py",
    ),
    metrics=("data/bench/throughput.json",),
)

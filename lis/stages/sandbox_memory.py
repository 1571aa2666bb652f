"""The ``sandbox_memory`` stage: Memory of an idle and a busy sandbox."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="sandbox_memory",
    cmd=("lis bench memory --image-manifest data/image/manifest.json --out "
         "data/bench/sandbox_memory.json --profile ${profile} --log logs/bench/sandbox_memory.log"),
    entry="lis.cli.bench_memory:memory",
    params=("sandbox_memory", "sandbox", "image"),
    deps=("data/image/manifest.json",),
    code=(
        "lis/paths.py", "lis/runtime/__init__.py", "lis/runtime/sandbox.py", "lis/sandbox",
        "lis/bench/__init__.py", "lis/bench/memory.py", "lis/analysis/__init__.py",
        "lis/analysis/efficiency_stats.py", "lis/cli/bench_memory.py",
    ),
    metrics=("data/bench/sandbox_memory.json",),
)

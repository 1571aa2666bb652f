"""The ``storage`` stage: Storage and memory (Table 12)."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="storage",
    cmd=("lis efficiency storage --quoted data/reference/storage_quoted.yaml --image-manifest "
         "data/image/manifest.json --memory data/bench/sandbox_memory.json --out "
         "data/analysis/storage.json --log logs/analysis/storage.log"),
    entry="lis.cli.efficiency_storage:storage",
    deps=("data/reference/storage_quoted.yaml", "data/image/manifest.json", "data/bench/sandbox_memory.json"),
    code=(
        "lis/analysis/__init__.py", "lis/analysis/efficiency_stats.py", "lis/analysis/efficiency_storage.py",
        "lis/cli/efficiency_storage.py",
    ),
    outs=("data/analysis/storage.json",),
)

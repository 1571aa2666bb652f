"""The ``efficiency`` stage: Efficiency: prompt, model and environment tokens; environment time (Tables 10, 11)."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="efficiency",
    cmd=("lis efficiency tokens --jobs --eval-root data/eval --out data/analysis/efficiency.json "
         "--episodes-csv data/analysis/efficiency_episodes.csv --profile ${profile} --log "
         "logs/analysis/efficiency.log"),
    entry="lis.cli.efficiency:tokens",
    params=("efficiency", "jobs"),
    deps=("data/eval",),
    code=(
        "lis/analysis/__init__.py", "lis/analysis/efficiency_episodes.py",
        "lis/analysis/efficiency_stats.py", "lis/analysis/efficiency_tables.py",
        "lis/analysis/efficiency_tokens.py", "lis/analysis/trajectories.py", "lis/cli/efficiency.py",
    ),
    outs=(
        "data/analysis/efficiency.json", "data/analysis/efficiency_episodes.csv",
        "data/analysis/efficiency_episodes.parquet",
    ),
)

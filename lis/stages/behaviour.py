"""The ``behaviour`` stage: Behaviour: external resources, files, computation, turns (Figure 2, Tables 4, 8, 9)."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="behaviour",
    cmd=("lis behaviour analyse --jobs --eval-root data/eval --out data/analysis/behaviour.json "
         "--csv-dir data/analysis/behaviour --turns-out data/analysis/behaviour/turns.jsonl --profile "
         "${profile} --log logs/analysis/behaviour.log"),
    entry="lis.cli.behaviour:analyse",
    params=("behaviour", "jobs"),
    deps=("data/eval",),
    code=(
        "lis/agent/__init__.py", "lis/agent/trajectory.py", "lis/analysis/__init__.py",
        "lis/analysis/trajectories.py", "lis/analysis/behaviour", "lis/cli/behaviour.py",
    ),
    outs=(
        "data/analysis/behaviour.json", "data/analysis/behaviour/groups.csv",
        "data/analysis/behaviour/figure2_by_domain.csv", "data/analysis/behaviour/table4.csv",
        "data/analysis/behaviour/table8.csv", "data/analysis/behaviour/table9.csv",
        "data/analysis/behaviour/table9_pairs.csv", "data/analysis/behaviour/turns.jsonl",
        "data/analysis/behaviour/turns.parquet",
    ),
)

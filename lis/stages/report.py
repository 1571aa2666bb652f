"""The ``report`` stage: Report: paper_figures/ (profile <profile>)."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="report",
    cmd=("lis report --profile ${profile} --image-manifest data/image/manifest.json --eval-root "
         "data/eval --out paper_figures --log logs/report.log"),
    entry="lis.cli.report:report",
    params=("report", "jobs", "models", "tasks"),
    deps=(
        "data/image/manifest.json", "data/reference/paper_numbers.yaml", "data/reference/design_tables.yaml",
        "data/eval", "data/analysis/behaviour.json", "data/analysis/behaviour/turns.jsonl",
        "data/analysis/efficiency.json", "data/analysis/storage.json", "data/bench/throughput.json",
        "data/train/runs", "data/models",
    ),
    code=("lis/report", "lis/cli/report.py"),
    outs=(
        "paper_figures/index.md", "paper_figures/index.json", "paper_figures/index.html",
        "paper_figures/tables", "paper_figures/figures", "paper_figures/trajectories",
    ),
)

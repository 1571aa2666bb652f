"""The ``context_tasks`` stage: Context tasks for RL (train split; files, prompt and math variants)."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="context_tasks",
    cmd=("lis context-tasks --out-dir data/train/context --profile ${profile} --log "
         "logs/train/context_tasks.log"),
    entry="lis.cli.context_tasks:context_tasks",
    params=("tasks",),
    deps=("${tasks.samples_dir}",),
    code=("lis/context_tasks", "lis/tasks", "lis/cli/context_tasks.py"),
    outs=(
        "data/train/context/files.jsonl", "data/train/context/prompt.jsonl", "data/train/context/math.jsonl",
        "data/train/context/manifest.json",
    ),
)

"""The ``tasks`` stage: Task set: <domain> (profile <profile>)."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="tasks",
    foreach="${jobs.domains}",
    cmd=("lis tasks --domain ${item} --profile ${profile} --out data/tasks/${item}.jsonl --log "
         "logs/tasks/${item}.log"),
    entry="lis.cli.tasks:tasks",
    params=("tasks",),
    deps=("${tasks.samples_dir}",),
    code=("lis/context_tasks", "lis/tasks", "lis/cli/tasks.py"),
    outs=("data/tasks/${item}.jsonl", "data/tasks/${item}.manifest.json"),
)

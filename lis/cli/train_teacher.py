"""``lis train teacher``: the command line of the ``teacher`` stage (lis/stages/teacher.py) — the
teacher's episodes in the real sandbox. Its options, then the stage's ``resolve`` and ``run``. (Kept out of
lis/cli/train.py, as ``lis train base`` is, so that the other training stages' code does not include the
teacher stage's module.)"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.sandbox import registry
from lis.stages import teacher as stage
from lis.util.log import setup_logging


def teacher(out: Path = typer.Option(Path(layout.TEACHER_DIR), "--out", help="Folder for trajectories.jsonl and "
                                                                              "manifest.json."),
            context_tasks: Path = typer.Option(layout.path(layout.CONTEXT_TASKS, variant="files"), "--context-tasks",
                                               help="Training context tasks the teacher solves."),
            image_manifest: Path = typer.Option(Path(layout.IMAGE_MANIFEST), "--image-manifest",
                                                help="The image stage's manifest."),
            profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
            log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Teacher episodes in the real sandbox (params `teacher`, with the `agent` and `sandbox`
    settings of evaluation): the scripted teacher by default, or any models entry."""

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    settings = stage.resolve(load_params(profile, params_file))
    stage.run(settings, {"context_tasks": context_tasks, "image_manifest": image_manifest}, {"out": out})

"""Which function a ``lis ...`` command line runs (for the pipeline's check of each stage's ``entry``)."""
from __future__ import annotations

import importlib
import shlex

from lis.cli import COMMANDS, GROUPS, command_callback, group_app, stage_command
from lis.errors import LisError
from lis.stages import registry


def command_entry(cmd: str) -> str:
    """``module:function`` of the ``lis`` sub-command that ``cmd`` runs ("lis eval run ..." →
    "lis.stages.evaluation:run"). Raises ValueError when ``cmd`` runs no lis sub-command, or when a
    stage's command line does not fit the options of the command made from its declaration."""
    entry = _runs(cmd)
    for stage in registry.stages():
        if stage.cmd == cmd:
            try:
                stage_command.options(stage, getattr(importlib.import_module(stage.entry.split(":")[0]), "OPTIONS", ()))
            except LisError as e:
                raise ValueError(e.one_line().removeprefix(f"stage {stage.name}: ")) from None
    return entry


def _runs(cmd: str) -> str:
    words = [w for w in shlex.split(cmd) if not w.startswith("-")]
    if not words or words[0] != "lis":
        raise ValueError(f"not a lis command: {cmd}")
    if len(words) > 1 and words[1] in COMMANDS:
        return _entry(command_callback(words[1]))
    if len(words) < 2 or words[1] not in GROUPS:
        raise ValueError(f"no lis command in: {cmd}")
    typer_app, rest = group_app(words[1]), words[2:]
    while rest:
        name = rest.pop(0)
        group = next((g for g in typer_app.registered_groups if g.name == name), None)
        if group is not None:
            typer_app = group.typer_instance
            continue
        command = next((c for c in typer_app.registered_commands
                        if (c.name or c.callback.__name__.replace("_", "-")) == name), None)
        if command is None:
            break
        return _entry(command.callback)
    raise ValueError(f"no lis command in: {cmd}")


def _entry(function) -> str:
    return f"{function.__module__}:{function.__name__}"

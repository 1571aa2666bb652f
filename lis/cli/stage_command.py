"""The ``lis`` command of a stage whose command line is its inputs and outputs, made from its declaration.

A stage whose ``entry`` is its own module's ``run`` (``entry="lis.stages.storage:run"``) has no command
module: each ``--option PATH`` of its declared ``cmd`` becomes an option, an input when PATH is one of
its ``deps`` (or the folder holding some) and an output when it is one of its outputs (or their folder),
the declared path its default. The command
also takes ``--profile``, ``--params`` and ``--set KEY=VALUE`` (when the stage reads params), ``--log``
and ``--verbose``. It calls the module's ``resolve(params)`` (when it has one; else the settings are
the params, or None for a stage that reads none), then ``run(settings, inputs, outputs)``, then prints
``summary(result)`` (when the module has one). The module's ``HELP`` (option name -> text) documents
the options.
"""
from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.errors import LisError
from lis.sandbox import registry
from lis.stages.spec import Stage, holds
from lis.util.log import setup_logging

SHARED = ("--profile", "--log")  # given by every stage command, not inputs or outputs


def is_generated(entry: str) -> bool:
    """Whether a stage's command is made here: its entry is a function of a stage module."""
    return entry.startswith("lis.stages.")


def title(stage: Stage) -> str:
    """The stage's title as help text (``${profile}`` shown as ``<profile>``)."""
    return re.sub(r"\$\{([^}]*)\}", r"<\1>", stage.title)


def options(stage: Stage) -> list[tuple[str, str, str]]:
    """``(option, "input" | "output", declared path)`` for each option of the stage's command line."""
    words = stage.cmd.split()[len(stage.command_words):]
    outputs = {*stage.outs, *stage.metrics, *(p.path for p in stage.plots)}
    found = []
    for flag, value in zip(words[::2], words[1::2]):
        if flag in SHARED:
            continue
        if not flag.startswith("--") or value.startswith("-"):
            raise LisError(f"stage {stage.name}: its command is not --option PATH pairs ({flag} {value})",
                           "write a command of its own in lis/cli for options that are not paths")
        kind = "input" if _holds(value, stage.deps) else "output" if _holds(value, outputs) else ""
        if not kind:
            raise LisError(f"stage {stage.name}: {flag} {value} is neither one of its deps nor one of its outputs",
                           "declare the path in deps or outs, or write a command of its own in lis/cli")
        found.append((flag, kind, value))
    if len(words) % 2:
        raise LisError(f"stage {stage.name}: {words[-1]} in its command has no value", "write --option PATH pairs")
    return found


def _holds(value: str, paths) -> bool:
    """``value`` is one of ``paths``, or the folder that holds some of them."""
    return any(p == value or holds(value, p) for p in paths)


def _name(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def command(stage: Stage):
    """The typer command function of ``stage`` (its module imported when the command runs)."""
    where, function = stage.entry.split(":")
    module = importlib.import_module(where)
    opts = options(stage)
    helps = getattr(module, "HELP", {})

    def run(**given) -> None:
        setup_logging(given["log_file"], given["verbose"])
        registry.install_signal_handlers()
        settings = None
        if stage.params:  # a stage that reads no params takes no --profile, --params or --set
            params = load_params(given["profile"], given["params_file"], given["sets"])
            settings = module.resolve(params) if hasattr(module, "resolve") else params
        inputs = {_name(f): given[_name(f)] for f, kind, _ in opts if kind == "input"}
        outputs = {_name(f): given[_name(f)] for f, kind, _ in opts if kind == "output"}
        result = getattr(module, function)(settings, inputs, outputs)
        text = module.summary(result) if hasattr(module, "summary") else None
        if text:
            typer.echo(text)

    params = []
    for flag, kind, path in opts:
        default = ... if "${" in path else Path(path)
        text = helps.get(_name(flag)) or f"The {kind} {path}."
        params.append(inspect.Parameter(_name(flag), inspect.Parameter.KEYWORD_ONLY, annotation=Path,
                                        default=typer.Option(default, flag, help=text)))
    shared = [("log_file", Optional[Path], LogFile), ("verbose", bool, Verbose)]
    if stage.params:
        shared = [("profile", Optional[str], Profile), ("params_file", Optional[Path], ParamsFile),
                  ("sets", Optional[list[str]], Sets), *shared]
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=a, default=d) for n, a, d in shared]
    run.__signature__ = inspect.Signature(params)
    run.__module__, run.__name__, run.__qualname__ = where, function, function
    about = " ".join((module.__doc__ or "").strip().split("\n\n")[0].split()).replace("``", "`")
    run.__doc__ = title(stage) + (f" (reads params: {', '.join(stage.params)})." if stage.params else ".") + f"\n\n{about}"
    return run

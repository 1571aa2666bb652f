"""The ``lis`` command of a pipeline stage, made from its declaration: the command runs the ``run`` of the
stage's module (or of the module named by ``runs``); there is no command module to write.

Its options and the module's names it uses (``OPTIONS``, ``resolve``, ``run``, ``summary``, ``HELP``,
``ABOUT``, ``reads_params``): docs/extending.md, "What the declaration says". Without ``ABOUT`` the
command's help is the stage's title and the first paragraph of the module's docstring; with
``PARAMS_OPTIONAL`` the command runs on its flags alone outside a project.
"""
from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.errors import LisError, ParamsError
from lis.stages.spec import Option, Stage
from lis.util.log import setup_logging

SHARED = ("--profile", "--log")  # given by every stage command, not inputs or outputs


def title(stage: Stage) -> str:
    """The stage's title as help text (``${profile}`` shown as ``<profile>``)."""
    return re.sub(r"\$\{([^}]*)\}", r"<\1>", stage.title)


def options(stage: Stage, declared=()) -> list[Option]:
    """The options of the stage's command: an input or output option for each ``--option PATH`` of its
    command line that is not declared, then the module's ``declared`` ones (``OPTIONS``)."""
    words = stage.cmd.split()[len(stage.command_words):]
    known = {flag: o for o in declared for flag in o.flags.split()}
    outputs = {*stage.outs, *stage.metrics, *(p.path for p in stage.plots)}
    found, i = [], 0
    while i < len(words):
        flag = words[i]
        if flag in known and known[flag].type is bool:
            i += 1
            continue
        if i + 1 >= len(words):
            raise LisError(f"stage {stage.name}: {flag} in its command has no value", "write --option PATH pairs")
        value, i = words[i + 1], i + 2
        if flag in SHARED or flag in known:
            continue
        if not flag.startswith("--") or value.startswith("-"):
            raise LisError(f"stage {stage.name}: its command is not --option PATH pairs ({flag} {value})",
                           "declare the options that are not paths in the stage module's OPTIONS")
        kind = "input" if _holds(value, stage.deps) else "output" if _holds(value, outputs) else ""
        if not kind:
            raise LisError(f"stage {stage.name}: {flag} {value} is neither one of its deps nor one of its outputs",
                           "declare the path in deps or outs, or the option in the stage module's OPTIONS")
        found.append(Option(flag, HELP_FOR_PATH.format(kind=kind, path=value), type=Path,
                            default=... if "${" in value else Path(value), to=kind))
    return [*found, *declared]


HELP_FOR_PATH = "The {kind} {path}."


def _holds(value: str, paths) -> bool:
    """``value`` is one of ``paths``, or the folder that holds some of them (placeholders and all)."""
    return any(p == value or p.startswith(value.rstrip("/") + "/") for p in paths)


def _parameter(o: Option, helps: dict) -> inspect.Parameter:
    kind = o.type if not o.many else list[o.type]
    optional = o.default is None
    extra = {k: v for k, v in (("min", o.low), ("max", o.high)) if v is not None}
    if o.file:
        extra["dir_okay"] = False
    text = helps.get(o.parameter) or helps.get(o.key) or o.help
    if o.flags:
        default = typer.Option(o.default, *o.flags.split(), help=text, **extra)
    else:
        default = typer.Argument(o.default, help=text, **extra)
    return inspect.Parameter(o.parameter, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Optional[kind] if optional else kind)


def _params(module, given: dict, settings_options: dict):
    """The params the command reads: always, unless the module's ``reads_params`` says its options need
    none; outside a project (no params file, none named) a module with ``PARAMS_OPTIONAL`` gets None."""
    explicit = bool(given["profile"] or given["params_file"] or given["sets"])
    if hasattr(module, "reads_params") and not module.reads_params(explicit, **settings_options):
        return None
    try:
        return load_params(given["profile"], given["params_file"], given["sets"])
    except ParamsError:
        if explicit or not getattr(module, "PARAMS_OPTIONAL", False):
            raise
        return None


def command(stage: Stage):
    """The typer command function of ``stage`` (its module imported when the command runs)."""
    where, function = stage.entry.split(":")
    module = importlib.import_module(where)
    opts = options(stage, getattr(module, "OPTIONS", ()))
    helps = getattr(module, "HELP", {})

    def run(**given) -> None:
        setup_logging(given["log_file"], given["verbose"])
        for o in opts:
            if o.choices and given[o.parameter] not in o.choices:
                raise LisError(f"unknown {o.flags.split()[0]} {given[o.parameter]!r}", f"use {' or '.join(o.choices)}")
        chosen = {o.key: given[o.parameter] for o in opts if o.to == "settings"}
        settings = None
        if stage.params:  # a stage that reads no params takes no --profile, --params or --set
            params = _params(module, given, chosen)
            settings = module.resolve(params, **chosen) if hasattr(module, "resolve") else params
        inputs = {o.key: given[o.parameter] for o in opts if o.to == "input" and given[o.parameter] is not None}
        outputs = {o.key: given[o.parameter] for o in opts if o.to == "output" and given[o.parameter] is not None}
        result = getattr(module, function)(settings, inputs, outputs)
        text = None
        if hasattr(module, "summary"):
            wants = len(inspect.signature(module.summary).parameters)
            text = module.summary(*(result, outputs)[:wants])
        if text:
            typer.echo(text)

    params = [_parameter(o, helps) for o in opts]
    shared = [("log_file", Optional[Path], LogFile), ("verbose", bool, Verbose)]
    if stage.params:
        shared = [("profile", Optional[str], Profile), ("params_file", Optional[Path], ParamsFile),
                  ("sets", Optional[list[str]], Sets), *shared]
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=a, default=d) for n, a, d in shared]
    run.__signature__ = inspect.Signature(params)
    run.__module__, run.__name__, run.__qualname__ = where, function, function
    reads = f"(reads params: {', '.join(stage.params)})" if stage.params else ""
    if hasattr(module, "ABOUT"):  # a command that several stages run says what it does, not one stage's title
        run.__doc__ = f"{module.ABOUT}\n\n{reads}"
    else:
        about = " ".join((module.__doc__ or "").strip().split("\n\n")[0].split()).replace("``", "`")
        run.__doc__ = f"{title(stage)} {reads}".rstrip() + f".\n\n{about}"
    return run

"""What a pipeline stage declares (:class:`Stage`). The code a stage runs is not declared: it is computed from
its command's imports (:mod:`lis.pipeline.code_deps`).

Paths are written as ``dvc.yaml`` writes them: ``${profile}``, ``${item}`` / ``${item.model}`` for
a stage run once per job (``foreach`` / ``matrix``), ``${section.key}`` for a path that params name.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

# The sections an evaluation job reads.
EVAL_PARAMS = ("models", "agent", "scoring", "eval")


def holds(folder: str, path: str) -> bool:
    """Whether ``path`` lies inside ``folder``, a literal folder (``data/eval`` holds
    ``data/eval/${item.model}/...``; a folder with placeholders holds nothing)."""
    return "${" not in folder and path.startswith(folder.rstrip("/") + "/")


@dataclass(frozen=True)
class Option:
    """An option of a stage's command beyond its declared paths (which become options by themselves).
    A stage module lists them in ``OPTIONS``; ``lis`` makes the command from them (lis.cli.stage_command)."""

    flags: str
    """``"--model -m"``: the long name first, then its aliases; empty for the positional argument."""
    help: str
    type: type = str
    """str, int, float, bool (a flag) or Path."""
    default: Any = None
    """``...``: required."""
    to: str = "settings"
    """Where the value goes: ``settings`` (a keyword of the module's ``resolve``), ``input`` or ``output``
    (a key of ``run``'s inputs or outputs; None is left out)."""
    name: str = ""
    """The keyword (default: the long flag without dashes, ``-`` as ``_``)."""
    many: bool = False
    """A list (the positional argument: any number of values)."""
    low: float | None = None
    high: float | None = None
    file: bool = False
    """A path that must not be a folder."""
    choices: tuple[str, ...] = ()
    """The values allowed, checked before the params are read."""

    @property
    def key(self) -> str:
        """The keyword of ``resolve``, or the key of ``run``'s inputs or outputs."""
        return self.name or self.parameter

    @property
    def parameter(self) -> str:
        """The command's parameter: the long flag without dashes, ``-`` as ``_`` (what the command line's
        error boundary reads: an ``--out`` is checked as an output before the command runs)."""
        return self.flags.split()[0].lstrip("-").replace("-", "_") if self.flags else self.name


@dataclass(frozen=True)
class Plot:
    """A ``dvc plots`` file: a CSV and its x and y columns."""

    path: str
    x: str
    y: str


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: one ``lis`` command, declared once.

    ``dvc.yaml`` (:mod:`lis.pipeline.dvc_file`) and the Snakemake rules
    (:mod:`lis.pipeline.snakemake_file`) are rendered from it; ``lis pipeline check`` says whether the
    rendered files are current.
    """

    name: str
    """The stage's name: its ``dvc.yaml`` stage and its Snakemake rule."""
    cmd: str
    """The command line, with ``dvc.yaml``'s ``${...}`` placeholders."""
    runs: str = ""
    """The stage module whose ``run`` its command runs, when not its own (``evaluation``: the four
    evaluation stages run ``lis eval run``, made from lis/stages/evaluation.py)."""
    params: tuple[str, ...] = ()
    """The params sections it reads, in order; a section only params.yaml may set (``jobs``) is tracked
    there alone, every other one in params.yaml and in the profile overlay. Empty: it reads no params."""
    deps: tuple[str, ...] = ()
    """Its data inputs (files or folders)."""
    outs: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    plots: tuple[Plot, ...] = ()
    foreach: str = ""
    """Run once per item of this list (``${jobs.domains}``); ``${item}`` in paths."""
    matrix: dict = field(default_factory=dict)
    """Run once per combination (``{"model": "${jobs.models}", "domain": "${jobs.domains}"}``);
    ``${item.<key>}`` in paths."""
    item: str = ""
    """A ``foreach`` stage's wildcard in its Snakemake rule: ``domain`` makes ``${item}`` ``{domain}``."""
    title: str = ""
    """The line shown when a job starts (the rule's message), with the command's placeholders."""
    priority: int = 0
    """Snakemake's priority: higher runs first when a core frees (the training chain is the critical path)."""
    threads: str = ""
    """The params key that gives the cores a job uses (``sft.threads``); empty: one."""
    inputs: str = ""
    """``module:function`` giving, from the params, the files a job reads inside the folders it depends on
    that other stages fill (``data/eval``): DVC hashes such a folder, Snakemake needs each file."""
    comment: tuple[str, ...] = ()
    """Comment lines written above the stage in ``dvc.yaml`` and its rule."""

    @property
    def entry(self) -> str:
        """``module:function`` of the command it runs (``lis pipeline check`` checks it against the CLI)."""
        return f"lis.stages.{self.runs or self.name}:run"

    @property
    def command_words(self) -> tuple[str, ...]:
        """The command's words before its first option: ``("lis", "train", "grpo")``."""
        return tuple(itertools.takewhile(lambda word: not word.startswith("-"), self.cmd.split()))

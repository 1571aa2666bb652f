"""``dvc.yaml``, rendered from the stage registry (:mod:`lis.stages.registry`).

The file is generated: ``lis pipeline dvc --write`` writes it, ``lis pipeline dvc --check`` (and
``lis pipeline check``, and the tests) fail when it differs from what the registry renders. A stage's
code dependencies are computed from its command's imports (:mod:`lis.pipeline.code_deps`). Adding a
stage is one module in ``lis/stages/`` and one Snakemake rule; this file follows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from lis.params import BASE_ONLY
from lis.pipeline.code_deps import stage_code
from lis.stages.registry import stages
from lis.stages.spec import Stage

PATH = "dvc.yaml"
HEADER = """\
# GENERATED from lis/stages/ by `lis pipeline dvc --write`: edit a stage's module there, not this file
# (`lis pipeline check` and the tests fail when the two differ). The Snakefile's rules declare the same
# stages, and `lis pipeline check` compares them.
# Each stage lists only the params it reads: its sections in params.yaml and in the profile overlay.
# Job lists (which models and domains) come from params.yaml's `jobs:`, which overlays cannot set.
# Every output, metrics and plots included, is cached (never `cache: false`): `dvc push` carries it to
# the remote and experiments keep it (tests/pipeline/test_dvc.py).
#   . .venv/bin/activate && dvc repro
vars:
  - params.yaml

stages:
"""


def _block(key: str, items, pad: str) -> list[str]:
    return [f"{pad}{key}:", *(f"{pad}  - {item}" for item in items)] if items else []


def _body(stage: Stage, pad: str) -> list[str]:
    lines = [f"{pad}cmd: {stage.cmd}"]
    lines += _block("deps", (*stage.deps, *stage_code(stage.entry)), pad)
    if stage.params:
        overlay = [s for s in stage.params if s not in BASE_ONLY]
        lines += _block("params", ("profile", *stage.params), pad)
        if overlay:
            lines += [f"{pad}  - workflow/params/${{profile}}.yaml:", *(f"{pad}      - {s}" for s in overlay)]
    lines += _block("outs", stage.outs, pad)
    lines += _block("metrics", stage.metrics, pad)
    if stage.plots:
        lines.append(f"{pad}plots:")
        for plot in stage.plots:
            lines += [f"{pad}  - {plot.path}:", f"{pad}      x: {plot.x}", f"{pad}      y: {plot.y}"]
    return lines


def _value(value) -> str:
    return value if isinstance(value, str) else "[" + ", ".join(value) + "]"


def render_stage(stage: Stage) -> list[str]:
    """One stage's lines, as dvc.yaml holds them (comment, foreach/matrix, the body)."""
    lines = [f"  # {line}" for line in stage.comment] + [f"  {stage.name}:"]
    if stage.foreach:
        return lines + [f"    foreach: {stage.foreach}", "    do:", *_body(stage, "      ")]
    if stage.matrix:
        lines += ["    matrix:", *(f"      {k}: {_value(v)}" for k, v in stage.matrix.items())]
    return lines + _body(stage, "    ")


def render(root: Path | None = None) -> str:
    """The whole dvc.yaml, from the stages of ``root``/lis/stages (default: the installed package's)."""
    found = stages(Path(root) / "lis" / "stages" if root else None)
    return HEADER + "\n\n".join("\n".join(render_stage(s)) for s in found) + "\n"


def problems(root: Path) -> list[str]:
    """[] when ``root``/dvc.yaml is what its lis/stages renders; else one line saying how to fix it."""
    path = Path(root) / PATH
    if not path.is_file() or path.read_text(encoding="utf-8") != render(root):
        return [f"{PATH} is not what lis/stages/ renders: run `lis pipeline dvc --write` (and edit a stage's "
                f"module in lis/stages/, not {PATH})"]
    return []


def entry_problems(root: Path, command_entry: Callable[[str], str]) -> list[str]:
    """Stages whose declared ``entry`` is not the function their command runs (``command_entry``:
    lis.cli.commands.command_entry)."""
    out = []
    for stage in stages(Path(root) / "lis" / "stages"):
        try:
            runs = command_entry(stage.cmd)
        except ValueError as e:
            out.append(f"stage {stage.name}: {e}")
            continue
        if runs != stage.entry:
            out.append(f"stage {stage.name}: entry {stage.entry} but its command runs {runs}")
    return out

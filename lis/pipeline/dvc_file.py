"""``dvc.yaml``, rendered from the stage registry (:mod:`lis.stages.registry`); a stage's code
dependencies come from its command's imports (:mod:`lis.pipeline.code_deps`)."""
from __future__ import annotations

from pathlib import Path

from lis.params import BASE_ONLY, overlay_sections
from lis.pipeline.code_deps import stage_code
from lis.stages.registry import stages
from lis.stages.spec import Stage

PATH = "dvc.yaml"
HEADER = """\
# GENERATED from lis/stages/ by `lis pipeline write`: edit a stage's module there, not this file
# (`lis pipeline check` and the tests fail when the two differ). The Snakemake rules
# (workflow/rules/stages.smk) are rendered from the same declarations.
# Each stage lists only the params it reads: its sections in params.yaml, and in the profile overlay where
# the overlays set them.
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


def _body(stage: Stage, pad: str, named: set[str]) -> list[str]:
    lines = [f"{pad}cmd: {stage.cmd}"]
    lines += _block("deps", (*stage.deps, *stage_code(stage.entry)), pad)
    if stage.params:
        overlay = [s for s in stage.params if s not in BASE_ONLY and s in named]
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


def render_stage(stage: Stage, named: set[str]) -> list[str]:
    """One stage's lines, as dvc.yaml holds them (comment, foreach/matrix, the body); ``named``: the
    sections the profile overlays name (tracked there too)."""
    lines = [f"  # {line}" for line in stage.comment] + [f"  {stage.name}:"]
    if stage.foreach:
        return lines + [f"    foreach: {stage.foreach}", "    do:", *_body(stage, "      ", named)]
    if stage.matrix:
        lines += ["    matrix:", *(f"      {k}: {_value(v)}" for k, v in stage.matrix.items())]
    return lines + _body(stage, "    ", named)


def render(root: Path | None = None) -> str:
    """The whole dvc.yaml, from the stages (and overlays) of ``root`` (default: the installed package's)."""
    root = Path(root) if root else Path(__file__).resolve().parents[2]
    named = overlay_sections(root)
    return HEADER + "\n\n".join("\n".join(render_stage(s, named)) for s in stages(root / "lis" / "stages")) + "\n"

"""``lis pipeline check`` and ``lis pipeline write``: the files rendered from the stage registry.

``dvc.yaml`` and ``workflow/rules/stages.smk`` are generated from ``lis/stages/``. Checked: each generated
file is what the registry renders, each stage's ``entry`` is the function its command runs, and every
path a stage declares is a template of :mod:`lis.layout`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from lis import layout
from lis.pipeline import dvc_file, snakemake_file
from lis.stages.registry import stages

RENDERED = {dvc_file.PATH: dvc_file.render, snakemake_file.PATH: snakemake_file.render}


def write(root: Path) -> list[Path]:
    """Render every generated file under ``root``; the paths written."""
    out = []
    for name, render in RENDERED.items():
        path = Path(root) / name
        path.write_text(render(root), encoding="utf-8")
        out.append(path)
    return out


def stale(root: Path) -> list[str]:
    """One line per generated file under ``root`` that is not what its lis/stages renders."""
    out = []
    for name, render in RENDERED.items():
        path = Path(root) / name
        if not path.is_file() or path.read_text(encoding="utf-8") != render(root):
            out.append(f"{name} is not what lis/stages/ renders: run `lis pipeline write` "
                       f"(edit a stage's module in lis/stages/, not {name})")
    return out


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


def layout_problems(root: Path) -> list[str]:
    """Paths the stages declare that are not templates of lis/layout.py."""
    return [problem for s in stages(Path(root) / "lis" / "stages")
            for problem in layout.problems({*s.deps, *s.outs, *s.metrics, *(p.path for p in s.plots)},
                                           f"stage {s.name}")]


def problems(root: Path, command_entry: Callable[[str], str]) -> list[str]:
    """Everything ``lis pipeline check`` reports; [] when the pipeline's declarations are sound."""
    return stale(root) + entry_problems(root, command_entry) + layout_problems(root)

"""The ``report`` stage: paper_figures/ — every table (Markdown, LaTeX, CSV) and figure (PNG, PDF) of the
paper, with the paper's numbers beside ours, and an index (md, json, html) with provenance.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

from lis import layout
from lis.errors import LisError
from lis.params import Params
from lis.report.build import build_report
from lis.report.inputs import IMAGE_MANIFEST
from lis.stages.spec import Stage

STAGE = Stage(
    name="report",
    title="Report: paper_figures/ (profile ${profile})",
    inputs="lis.pipeline.rule_inputs:report",
    cmd=("lis report --profile ${profile} --image-manifest data/image/manifest.json --eval-root "
         "data/eval --out paper_figures --log logs/report.log"),
    params=("report", "jobs", "models", "tasks"),
    deps=(
        "data/image/manifest.json", "data/reference/paper_numbers.yaml", "data/reference/design_tables.yaml",
        "data/eval", "data/analysis/behaviour.json", "data/analysis/behaviour/turns.jsonl",
        "data/analysis/efficiency.json", "data/analysis/storage.json", "data/bench/throughput.json",
        "data/train/runs", "data/models",
    ),
    outs=(
        "paper_figures/index.md", "paper_figures/index.json", "paper_figures/index.html",
        "paper_figures/tables", "paper_figures/figures", "paper_figures/trajectories",
    ),
)

log = logging.getLogger("lis.report")
HELP = {
    "image_manifest": "Manifest of the image stage (must be the declared one).",
    "eval_root": "The eval jobs' outputs (data/eval).",
    "out": "Folder to write into.",
}


def run(params: Params, inputs: dict[str, Path], outputs: dict[str, Path]) -> list[Path]:
    """Write paper_figures/ into ``outputs["out"]`` (relative: under the project root) from exactly the
    inputs the stage declares for the params' jobs (:func:`lis.report.inputs.declared_inputs`, read
    under the project root); return the files written. ``inputs`` ``image_manifest`` and ``eval_root``
    are the command line's: they must be the declared ones (``data/image/manifest.json``,
    ``data/eval``), else a LisError says so. A missing declared input is a LisError naming it."""

    t0 = time.monotonic()
    for given, declared in ((inputs["image_manifest"], IMAGE_MANIFEST), (inputs["eval_root"], layout.EVAL_ROOT)):
        if given.as_posix().rstrip("/") != declared:
            raise LisError(f"{given} is not the report's declared input {declared}",
                           f"the report reads the pipeline's outputs under the project root: pass {declared}")
    p = params
    out = outputs["out"]
    out = out if out.is_absolute() else p.root / out
    paths = build_report(p.root, p.data, p.profile, out)
    for path in paths:
        log.debug("wrote %s", path)
    log.info("wrote %d files under %s in %.1fs", len(paths), out, time.monotonic() - t0)
    return paths

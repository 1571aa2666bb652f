"""``lis report``: the command line of the ``report`` stage (lis/stages/report.py), the last stage,
writing paper_figures/. Its options, then the stage's ``resolve`` and ``run``."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.stages import report as stage
from lis.util.log import setup_logging


def report(image_manifest: Path = typer.Option(Path(layout.IMAGE_MANIFEST), "--image-manifest",
                                               help="Manifest of the image stage (must be the declared one)."),
           eval_root: Path = typer.Option(Path(layout.EVAL_ROOT), "--eval-root", help="The eval jobs' outputs (data/eval)."),
           out: Path = typer.Option(Path(layout.REPORT_DIR), "--out", help="Folder to write into."),
           profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
           log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Regenerate paper_figures/: every table (Markdown, LaTeX, CSV) and figure (PNG, PDF) of the paper,
    with the paper's numbers beside ours and an index (md, json, html) with provenance. Reads exactly
    the inputs the report stage declares for the params' jobs (lis.report.inputs)."""

    setup_logging(log_file, verbose)
    settings = stage.resolve(load_params(profile, params_file))
    stage.run(settings, {"image_manifest": image_manifest, "eval_root": eval_root}, {"out": out})

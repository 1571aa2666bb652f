"""``lis report``: the last stage, writing paper_figures/."""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.errors import LisError
from lis.report.build import build_report
from lis.report.inputs import IMAGE_MANIFEST
from lis.util.log import setup_logging

log = logging.getLogger("lis.report")


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
    t0 = time.monotonic()
    p = load_params(profile, params_file)
    for given, declared in ((image_manifest, IMAGE_MANIFEST), (eval_root, layout.EVAL_ROOT)):
        if given.as_posix().rstrip("/") != declared:
            raise LisError(f"{given} is not the report's declared input {declared}",
                           f"the report reads the pipeline's outputs under the project root: pass {declared}")
    out = out if out.is_absolute() else p.root / out
    paths = build_report(p.root, p.data, p.profile, out)
    for path in paths:
        log.debug("wrote %s", path)
    log.info("wrote %d files under %s in %.1fs", len(paths), out, time.monotonic() - t0)

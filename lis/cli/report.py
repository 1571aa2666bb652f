"""``lis report``: the last stage, writing paper_figures/."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params

log = logging.getLogger("lis.report")


def report(image_manifest: Path = typer.Option(Path("data/image/manifest.json"), "--image-manifest",
                                               help="Manifest of the image stage."),
           eval_root: Path = typer.Option(Path("data/eval"), "--eval-root", help="The eval jobs' outputs."),
           out: Path = typer.Option(Path("paper_figures"), "--out", help="Folder to write into."),
           profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
           log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Regenerate paper_figures/ (an index with provenance, and every table and figure available)."""
    from lis.report.summary import load_metrics
    from lis.manifest import read_json
    from lis.report import write_index
    from lis.report.tables import write_tables
    from lis.util.log import setup_logging

    setup_logging(log_file, verbose)
    p = load_params(profile, params_file)
    sec = p.section("report")
    metrics = load_metrics(eval_root)
    tables = write_tables(metrics, out / "tables")
    paths = tables + write_index(sec["title"], out, p.root, p.profile, read_json(image_manifest), metrics, tables)
    for path in paths:
        log.info("wrote %s", path)

"""``lis efficiency storage``: the command line of the ``storage`` stage (lis/stages/storage.py): its
options, then the stage's ``run``, then a summary on the terminal."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, Verbose
from lis.stages import storage as stage
from lis.util.log import setup_logging


def storage(quoted: Path = typer.Option(Path(layout.STORAGE_QUOTED), "--quoted",
                                        help="The paper's quoted storage and memory numbers."),
            image_manifest: Path = typer.Option(Path(layout.IMAGE_MANIFEST), "--image-manifest",
                                                help="The image stage's manifest (our image's size)."),
            memory: Path = typer.Option(Path(layout.SANDBOX_MEMORY), "--memory",
                                        help="`lis bench memory` output (idle and busy memory per sandbox)."),
            out: Path = typer.Option(Path(layout.STORAGE), "--out", dir_okay=False, help="JSON to write."),
            log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Table 12: our image's measured size beside the paper's shared image and the task-specific image
    sets it quotes, and our sandbox memory (idle, busy peak; mean, n, interval) beside the paper's."""

    setup_logging(log_file, verbose)
    report = stage.run(None, {"quoted": quoted, "image_manifest": image_manifest, "memory": memory}, {"out": out})
    for row in report["images"]:
        typer.echo(f"{row['name']:<26} {row['kind']:<22} {row['size_gb']:>10} GB  ({row['origin']})")
    for key in ("idle", "busy_peak", "busy_cgroup_peak"):
        m = report["memory"][key]
        typer.echo(f"memory {key:<18} ours {m['mb']} MB (n={m['n']}, 95% {m['ci95_mb']})  paper ~{m['paper_mb']} MB")

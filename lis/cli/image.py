"""``lis image``: the sandbox image. ``build`` is the ``image`` stage's command, made from its
declaration (lis/stages/image.py); ``ensure``, ``tag`` and ``prune`` are the set-up's and the user's."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.sandbox.image import ensure_image, expected_tag
from lis.sandbox.image.build import prune_images
from lis.util.log import setup_logging

app = typer.Typer(help="Build and describe the sandbox image.", no_args_is_help=True)
log = logging.getLogger("lis.image")


@app.command("ensure")
def ensure(profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
           log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Build the sandbox image if its tag is missing; write no manifest (what set-up runs)."""

    setup_logging(log_file, verbose)
    p = load_params(profile, params_file)
    facts = ensure_image(p.settings("image").written(), p.root, inspect=False)
    log.info("%s: %s, %.0f MB (%s)", facts["action"], facts["tag"] or facts["rootfs"], facts["size_mb"], facts["base"])


@app.command("tag")
def tag(profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """Print the tag the current params and images/ give (without building)."""

    p = load_params(profile, params_file)
    typer.echo(expected_tag(p.settings("image").written(), p.root))


@app.command("prune")
def prune(dry_run: bool = typer.Option(False, "--dry-run", help="Only list what would be removed."),
          profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """Remove sandbox images (label lis.managed=true) and kept root filesystems other than the current one."""

    p = load_params(profile, params_file)
    for name in prune_images(p.settings("image").written(), p.root, dry_run=dry_run):
        typer.echo(("would remove " if dry_run else "removed ") + name)

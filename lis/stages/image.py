"""The ``image`` stage: Sandbox image (profile <profile>); what it does: ``ABOUT``."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lis.manifest import stage_manifest, write_json
from lis.params import Params
from lis.sandbox.image import ensure_image
from lis.stages.spec import Option, Stage

STAGE = Stage(
    name="image",
    title="Sandbox image (profile ${profile})",
    cmd="lis image build --profile ${profile} --out data/image/manifest.json --log logs/image.log",
    params=("image",),
    deps=("${image.context}",),
    outs=("data/image/manifest.json",),
)

log = logging.getLogger("lis.image")

ABOUT = """Build the sandbox image if its tag is missing, then write its manifest.

The tag is a content hash of image.context (images/sandbox) and the image params, so the build runs only when one of
them changes. image.build picks the path: dockerfile (registry), bootstrap (offline Debian rootfs + docker import) or
auto."""
OPTIONS = (Option("--out", "Manifest to write.", Path, Path("data/image/manifest.json"), to="output", file=True),
           Option("--force", "Rebuild even if the content-hash tag exists.", bool, False))


@dataclass(frozen=True)
class Settings:
    """One run of the stage, the flag and the params resolved (:func:`resolve`). The image's context
    folder, its one data input, is the section's ``context`` (relative to ``root``)."""

    section: dict
    """The params' ``image`` section."""
    root: Path
    """The project root: the section's ``context`` is relative to it."""
    profile: str
    """The params profile (recorded in the manifest)."""
    params_hash: str
    """The hash of the section and the profile (the manifest's ``params_hash``)."""
    force: bool = False
    """Rebuild even if the content-hash tag exists."""


def resolve(p: Params, *, force: bool = False) -> Settings:
    """The settings from the params (``image``, the profile applied) and the ``--force`` flag."""

    return Settings(section=p.settings("image").written(), root=p.root, profile=p.profile, params_hash=p.section_hash("image"),
                    force=force)


def run(settings: Settings, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict[str, Any]:
    """Build the sandbox image unless its tag exists (``settings.force``: build it anyway; without a
    Docker engine, only the root filesystem), then write the manifest (the image's facts: tag, id,
    size, build path, what it holds inside) to ``outputs["out"]``; return the manifest. ``inputs`` is
    empty: the context folder is the settings' section's. Raises LisError when the image cannot be built."""

    t0 = time.monotonic()
    facts = ensure_image(settings.section, settings.root, force=settings.force)
    manifest = stage_manifest("image", settings.root, settings.profile, settings.params_hash, time.monotonic() - t0,
                              image=facts)
    write_json(outputs["out"], manifest)
    inside = facts["inside"]
    log.info("%s: %s, %.0f MB, Python %s as %s in %s (%s)", facts["action"], facts["tag"] or facts["rootfs"],
             facts["size_mb"], inside["python"], inside["user"], inside["cwd"], facts["base"])
    return manifest

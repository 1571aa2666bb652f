"""Build sandbox configs from params and start sandboxes of the configured backend."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from lis.config.sandbox import SandboxSection
from lis.errors import LisError
from lis.params import find_root, section_model
from lis.paths import rootfs_dir
from lis.sandbox.base import Limits, Sandbox, SandboxConfig
from lis.sandbox.bwrap_backend import BwrapSandbox, bwrap_problem
from lis.sandbox.docker_backend import DockerSandbox
from lis.sandbox.image import expected_tag
from lis.sandbox.image.spec import ImageSpec

log = logging.getLogger(__name__)


def config_from_params(sandbox: dict[str, Any], image: dict[str, Any], *, run_id: str,
                       image_manifest: dict[str, Any] | None = None, backend: str | None = None) -> SandboxConfig:
    """A SandboxConfig from the ``sandbox`` params section plus the image (its manifest when the image
    stage has run, else the image params' tag). ``backend`` (a stage's own ``sandbox_backend``), when
    given, replaces the section's; auto: bubblewrap where it runs here, else the section's."""
    if backend:
        if backend not in ("docker", "bwrap", "auto"):
            raise LisError(f"sandbox backend {backend!r} is not docker, bwrap or auto",
                           "set sandbox_backend: docker | bwrap | auto")
        if backend == "auto":
            backend = _bwrap_if_it_runs(image, image_manifest) or sandbox["backend"]
        sandbox = {**sandbox, "backend": backend}
    sec = section_model(SandboxSection, sandbox, "sandbox", "params")  # an unknown key: one line naming it
    if image_manifest is not None:
        facts = image_manifest.get("image") if isinstance(image_manifest, dict) else None
        if not isinstance(facts, dict) or not isinstance(facts.get("tag") or "", str) \
                or not isinstance(facts.get("rootfs") or "", str) or not (facts.get("tag") or facts.get("rootfs")):
            raise LisError("the image manifest is not the image stage's (neither image.tag nor image.rootfs)",
                           "give data/image/manifest.json as `lis image build` wrote it, or rebuild it")
        if not facts.get("tag") and sec.backend == "docker":  # built where no Docker engine answered
            raise LisError("the image was built without a Docker engine (its manifest has a root filesystem, "
                           "no image.tag): the docker backend cannot run it",
                           "start the Docker engine and run `lis image build` again, or use sandbox.backend: bwrap")
    facts = (image_manifest or {}).get("image", {})
    tag = facts.get("tag") or ""
    rootfs = facts.get("rootfs") or ""
    if not tag and sec.backend == "docker":
        tag = expected_tag(image, find_root())
    if not rootfs and sec.backend == "bwrap":
        rootfs = str(_rootfs_for(image))
    return SandboxConfig(
        backend=sec.backend, image=tag, rootfs=rootfs, user=image["user"], uid=image["uid"],
        network=sec.network, command_timeout_s=float(sec.command_timeout_s),
        lifetime_s=float(sec.lifetime_s), limits=Limits(**sec.limits.model_dump()),
        run_id=run_id, engine=None, max_starting=sec.admission.max_starting,
        max_starts_per_s=float(sec.admission.max_starts_per_s))


def _bwrap_if_it_runs(image: dict[str, Any], image_manifest: dict[str, Any] | None) -> str | None:
    """"bwrap" when bubblewrap can run the image's root filesystem on this machine, else None (with
    a warning naming why)."""
    rootfs = Path((image_manifest or {}).get("image", {}).get("rootfs") or _rootfs_for(image))
    problem = bwrap_problem()
    if problem is None and not (rootfs / "usr/bin/python3").exists():
        problem = f"no root filesystem at {rootfs} (the image was not bootstrapped, or image.keep_rootfs is false)"
    if problem is None:
        return "bwrap"
    log.warning("sandbox_backend auto: %s; these sandboxes run on the sandbox section's backend", problem)
    return None


def _rootfs_for(image: dict[str, Any]) -> Path:
    spec = ImageSpec.from_params(image, find_root(), "bootstrap")
    return rootfs_dir(spec.content_hash)


def make_sandbox(config: SandboxConfig) -> Sandbox:
    """An unstarted sandbox of ``config.backend`` (use it as a context manager, or call start())."""
    if config.backend == "docker":
        return DockerSandbox(config)
    if config.backend == "bwrap":
        return BwrapSandbox(config)
    raise LisError(f"unknown sandbox backend '{config.backend}'", "set sandbox.backend to docker or bwrap")

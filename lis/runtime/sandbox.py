"""The ``sandbox`` and ``image`` sections of params → :class:`lis.sandbox.base.SandboxConfig`."""
from __future__ import annotations

import dataclasses
from typing import Any

from lis import layout
from lis.manifest import read_image_manifest
from lis.sandbox.base import LINE_BUFFERED_STDERR, SandboxConfig
from lis.sandbox.factory import config_from_params

BUILT_IMAGE_MANIFEST = layout.IMAGE_MANIFEST  # under the project root: what `lis image build` wrote


def sandbox_config(params, *, run_id: str, image_manifest: dict[str, Any] | None = None, backend: str | None = None,
                   overrides: dict[str, Any] | None = None, built_image: bool = False,
                   deterministic: bool = False) -> SandboxConfig:
    """The SandboxConfig of the params' ``sandbox`` section and image (see
    :func:`lis.sandbox.factory.config_from_params`). Raises LisError.

    ``overrides``: keys of the sandbox section replaced (None or empty: kept). ``backend``: a stage's
    ``sandbox_backend``. ``image_manifest``: the image stage's manifest (None: the image params' tag);
    ``built_image``: without one, on docker, the project's built image manifest when it exists.
    ``deterministic``: the shell writes each stderr line whole (``LINE_BUFFERED_STDERR``)."""
    section = params.settings("sandbox").written()
    section.update({k: v for k, v in (overrides or {}).items() if v})
    if built_image and image_manifest is None and section["backend"] == "docker":
        path = params.root / BUILT_IMAGE_MANIFEST
        if path.exists():
            image_manifest = read_image_manifest(path)
    config = config_from_params(section, params.settings("image").written(), run_id=run_id, image_manifest=image_manifest,
                                backend=backend)
    if deterministic:
        config = dataclasses.replace(config, env={**config.env, **LINE_BUFFERED_STDERR})
    return config

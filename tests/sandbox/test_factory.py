"""A stage's own sandbox backend (teacher/grpo.sandbox_backend): docker | bwrap | auto."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from lis.errors import LisError
from lis.params import load
from lis.sandbox.factory import config_from_params

ROOT = Path(__file__).resolve().parents[2]


def sections():
    p = load(ROOT, profile="ci")
    return p.section("sandbox"), p.section("image")


def test_auto_takes_bubblewrap_where_its_root_filesystem_runs(image_tag, caplog):
    sandbox, image = sections()
    assert sandbox["backend"] == "docker"
    assert config_from_params(sandbox, image, run_id="t", backend="auto").backend == "bwrap"
    assert config_from_params(sandbox, image, run_id="t", backend="docker").backend == "docker"
    # an image without a kept root filesystem (another suite: never bootstrapped here): Docker, said why
    with caplog.at_level(logging.WARNING, logger="lis.sandbox.factory"):
        cfg = config_from_params(sandbox, {**image, "suite": "no-such-suite"}, run_id="t", backend="auto")
    assert cfg.backend == "docker" and "no root filesystem" in caplog.text


def test_an_unknown_backend_is_a_one_line_error():
    sandbox, image = sections()
    with pytest.raises(LisError, match="not docker, bwrap or auto"):
        config_from_params(sandbox, image, run_id="t", backend="podman")


def test_an_image_built_without_docker_runs_on_bubblewrap_only():
    """Where no Docker engine answers, the image stage keeps the root filesystem and no tag: bubblewrap
    runs it; the docker backend is one line saying why not; a manifest with neither is refused."""
    sandbox, image = sections()
    manifest = {"stage": "image", "image": {"tag": None, "rootfs": "/var/cache/lis/rootfs"}}
    cfg = config_from_params({**sandbox, "backend": "bwrap"}, image, run_id="t", image_manifest=manifest)
    assert cfg.backend == "bwrap" and cfg.rootfs == "/var/cache/lis/rootfs" and cfg.image == ""
    with pytest.raises(LisError, match="built without a Docker engine .* the docker backend cannot run it"):
        config_from_params(sandbox, image, run_id="t", image_manifest=manifest)
    for facts in ({"tag": None, "rootfs": None}, {"tag": 3}, "x"):
        with pytest.raises(LisError, match="neither image.tag nor image.rootfs"):
            config_from_params(sandbox, image, run_id="t", image_manifest={"image": facts})

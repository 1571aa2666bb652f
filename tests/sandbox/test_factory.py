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

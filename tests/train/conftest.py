"""Fixtures of the training tests: a tiny base model (seconds to build) and a started sandbox."""
from __future__ import annotations

import pytest

from tests.sandbox.conftest import base_config  # noqa: F401  (session fixture: the image, small limits)


@pytest.fixture(scope="session")
def tiny_base_dir(tmp_path_factory):
    from lis.offline.base import build_base

    out = tmp_path_factory.mktemp("base") / "base"
    build_base(out, seed=0, corpus_episodes=100)
    return out


@pytest.fixture
def sandbox(image_tag):
    from lis.sandbox import SandboxConfig, make_sandbox

    sb = make_sandbox(SandboxConfig(image=image_tag, run_id="pytest-train", command_timeout_s=20)).start()
    yield sb
    sb.close()

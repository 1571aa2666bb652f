"""Sandboxes of both backends for the conformance and hostile suites (real Docker, real bwrap)."""
from __future__ import annotations

import dataclasses
import os

import pytest

from lis.sandbox import Limits, SandboxConfig, make_sandbox

# one run id per pytest-xdist worker: a worker's leak check never sees the other's sandboxes at work
TEST_RUN = "pytest-" + os.environ.get("PYTEST_XDIST_WORKER", "main")
BACKENDS = ["docker", "bwrap"]


@pytest.fixture(scope="session")
def base_config(image_tag, docker_client) -> SandboxConfig:
    from lis.paths import rootfs_dir

    tag = image_tag
    content = docker_client.images.get(tag).labels["lis.content"]
    return SandboxConfig(image=tag, rootfs=str(rootfs_dir(content)), command_timeout_s=10, run_id=TEST_RUN,
                         limits=Limits(memory_mb=512, pids=128, testbed_mb=64, tmp_mb=32, home_mb=32,
                                       max_output_bytes=1 << 20))


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def make(base_config, backend):
    """make(**overrides) → a started sandbox of the parametrised backend, closed after the test."""
    made = []

    def _make(**overrides):
        limits = overrides.pop("limits", {})
        cfg = dataclasses.replace(base_config, backend=backend, **overrides,
                                  limits=dataclasses.replace(base_config.limits, **limits))
        sb = make_sandbox(cfg).start()
        made.append(sb)
        return sb

    yield _make
    for sb in made:
        sb.close()


@pytest.fixture
def sb(make):
    return make()


@pytest.fixture(scope="session", autouse=True)
def no_leaks_at_the_end(request):
    """After the whole session no container of the test run may remain (checked for real)."""
    yield
    try:
        from lis.sandbox.engine import connect

        left = connect().containers.list(all=True, sparse=True, filters={"label": [f"lis.run={TEST_RUN}"]})
    except Exception:
        return
    assert not left, f"leaked containers: {[c.id[:12] for c in left]}"

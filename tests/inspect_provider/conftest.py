"""Inspect AI's provider tests: real Docker and real bubblewrap sandboxes through the ``lis``
provider (lis/inspect). Needs the ``inspect`` extra (installed by `make test`'s set-up)."""
from __future__ import annotations

import contextlib

import pytest

BACKENDS = ["docker", "bwrap"]


@contextlib.asynccontextmanager
async def sample_sandbox(task: str, backend: str):
    """One sample's sandbox through the provider's own life cycle (sample_init ... sample_cleanup)."""
    from lis.inspect.config import LisSandboxConfig
    from lis.inspect.provider import LisSandboxEnvironment

    cfg = LisSandboxConfig(backend=backend)
    envs = await LisSandboxEnvironment.sample_init(task, cfg, {})
    try:
        yield envs["default"]
    finally:
        await LisSandboxEnvironment.sample_cleanup(task, cfg, envs, False)


@pytest.fixture
def anyio_backend():
    return "asyncio"


def inspect_containers() -> list:
    """Containers the provider started (label lis.run=inspect-…) that still exist."""
    from lis.inspect.pools import RUN_PREFIX
    from lis.sandbox.engine import connect

    out = []
    for c in connect().api.containers(all=True, filters={"label": ["lis.managed=true"]}):
        if str((c.get("Labels") or {}).get("lis.run", "")).startswith(RUN_PREFIX):
            out.append(c)
    return out


@pytest.fixture(scope="session", autouse=True)
def close_pools_and_check_leaks():
    """Pools opened without task_init close at the end of the session; then none of the
    provider's containers may remain (checked for real)."""
    yield
    from lis.inspect.pools import close_all

    close_all()
    left = inspect_containers()
    assert not left, f"leaked containers: {[c['Id'][:12] for c in left]}"

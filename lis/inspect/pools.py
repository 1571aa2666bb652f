"""One :class:`lis.sandbox.pool.SandboxPool` per configuration, shared by the samples that use it.

Inspect calls ``task_init`` once per distinct sandbox config, so pools are keyed by the config
alone: ``open_pool`` (task_init) starts one, ``pool_for`` (sample_init) finds it or opens one when
nobody called task_init (Inspect's self-check), ``close_pool`` (task_cleanup) closes it and sweeps
its run by label. Each pool has its own run id, so closing one never touches another's sandboxes.
"""
from __future__ import annotations

import logging
import threading
import uuid
from pathlib import Path

from lis.errors import LisError
from lis.inspect.config import LisSandboxConfig, load_params, sandbox_config
from lis.sandbox.bwrap_backend import bwrap_problem
from lis.sandbox.cleanup import cleanup
from lis.sandbox.engine import connect
from lis.sandbox.image import ensure_image as ensure
from lis.sandbox.pool import SandboxPool

log = logging.getLogger(__name__)

RUN_PREFIX = "inspect-"
_lock = threading.Lock()
_pools: dict[str, "_Entry"] = {}


class _Entry:
    def __init__(self, pool: SandboxPool, run_id: str):
        self.pool, self.run_id, self.users = pool, run_id, 0


def ensure_image(cfg: LisSandboxConfig) -> dict | None:
    """The image facts (tag, rootfs) of params, built when missing; None when the config names its
    own image (Docker) or root filesystem (bubblewrap), which must then exist."""
    if cfg.image or cfg.rootfs:
        return None
    params = load_params(cfg)
    return ensure(params.settings("image").written(), params.root, inspect=False)


def _check(sc) -> None:
    if sc.backend == "bwrap":
        problem = bwrap_problem()
        if problem:
            raise LisError(f"lis sandbox: bubblewrap cannot run here: {problem}", "use backend: docker")
        if not (Path(sc.rootfs) / "usr/bin/python3").exists():
            raise LisError(f"lis sandbox: no root filesystem at {sc.rootfs}",
                           "build it with `lis image build` (image.keep_rootfs: true), or give rootfs:")
    else:
        try:
            connect(sc.engine).images.get(sc.image)
        except LisError:
            raise
        except Exception as e:  # docker.errors.ImageNotFound and kin
            raise LisError(f"lis sandbox: no Docker image {sc.image} ({' '.join(str(e).split())[:160]})",
                           "build it with `lis image build`, or give image: an existing tag") from None


def open_pool(cfg: LisSandboxConfig, facts: dict | None = None) -> SandboxPool:
    """The pool of ``cfg``, opened now if need be; every call is matched by one close_pool."""
    key = cfg.key()
    with _lock:
        entry = _pools.get(key)
        if entry is None:
            run_id = RUN_PREFIX + uuid.uuid4().hex[:10]
            sc, pool = sandbox_config(cfg, run_id, facts)
            _check(sc)
            entry = _pools[key] = _Entry(SandboxPool(sc, max_concurrent=int(pool.get("max_concurrent", 8)),
                                                     warm=int(pool.get("warm", 0))), run_id)
        entry.users += 1
        return entry.pool


def pool_for(cfg: LisSandboxConfig) -> SandboxPool:
    with _lock:
        entry = _pools.get(cfg.key())
    if entry is not None:
        return entry.pool
    return open_pool(cfg, ensure_image(cfg))  # no task_init: open until close_all or the process ends


def close_pool(cfg: LisSandboxConfig, sweep: bool = True) -> None:
    key = cfg.key()
    with _lock:
        entry = _pools.get(key)
        if entry is None:
            return
        entry.users -= 1
        if entry.users > 0:
            return
        del _pools[key]
    entry.pool.close()
    if sweep and entry.pool.config.backend == "docker":
        try:
            left = cleanup(run=entry.run_id, engines=entry.pool.engines)
            if left:
                log.warning("removed %d lis sandbox(es) left by run %s: %s", len(left), entry.run_id, ", ".join(left[:5]))
        except Exception as e:  # noqa: BLE001 - the engine went away: `inspect sandbox cleanup lis` sweeps later
            log.warning("lis sandbox sweep of run %s failed: %s", entry.run_id, e)


def default_max_sandboxes() -> int | None:
    """sandbox.pool.max_concurrent of the default params (None when they cannot be read)."""
    try:
        _, pool = sandbox_config(LisSandboxConfig(), "probe")
        return int(pool["max_concurrent"])
    except Exception:  # noqa: BLE001 - Inspect then applies no maximum of ours
        return None


def close_all() -> None:
    """Close every open pool (the ones opened without task_init: a test session's end)."""
    with _lock:
        keys = list(_pools)
    for key in keys:
        with _lock:
            entry = _pools.get(key)
            if entry is None:
                continue
            entry.users = 1
        close_pool(LisSandboxConfig.model_validate_json(key))


def open_pools() -> int:
    """How many pools are open (tests)."""
    with _lock:
        return len(_pools)

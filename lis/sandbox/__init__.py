"""Sandboxes: the small computers the agent works in, and the image they run.

    from lis.sandbox import SandboxConfig, SandboxPool, make_sandbox

    with make_sandbox(config).start() as box:        # one sandbox (docker or bwrap, from the config)
        result = box.exec("python3 -c 'print(6*7)'")
    pool = SandboxPool(config, max_concurrent=4)     # at most 4 live sandboxes, handed out and taken back
    with pool.sandbox() as box: ...

The public names load their modules on first use (:mod:`lis.util.lazy`). A :class:`SandboxConfig` from
the params: :func:`lis.runtime.sandbox_config`.
"""
from lis.util.lazy import lazy_exports

EXPORTS = {
    "Sandbox": "lis.sandbox.base",
    "SandboxConfig": "lis.sandbox.base",
    "ExecResult": "lis.sandbox.base",
    "Limits": "lis.sandbox.base",
    "SandboxError": "lis.sandbox.base",
    "make_sandbox": "lis.sandbox.factory",
    "SandboxPool": "lis.sandbox.pool",
}
__all__ = sorted(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

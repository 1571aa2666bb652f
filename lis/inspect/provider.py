"""The ``lis`` sandbox provider for Inspect AI (registered here; Inspect loads this module through
the ``inspect_ai`` entry point in pyproject.toml).

``task_init`` makes sure the image or root filesystem exists and opens the config's pool (once per
distinct config); ``sample_init`` takes a sandbox from it; ``sample_cleanup`` destroys it;
``task_cleanup`` (and ``inspect sandbox cleanup lis``) closes the pool and sweeps its run's
containers by label. ``exec`` starts a fresh process per call, never the agent's persistent shell;
concurrent ``exec`` calls on one sample run one after another (docs/inspect-provider.md).
"""
from __future__ import annotations

import functools
import posixpath
import threading
from typing import Any, Literal, Union, overload

import anyio
from inspect_ai.util import (ExecResult, OutputLimitExceededError, SandboxConnection, SandboxEnvironment,
                             SandboxEnvironmentConfigType, SandboxEnvironmentLimits, sandboxenv)
from inspect_ai.util._sandbox.environment import SandboxUnavailableError, SandboxUserUnsupportedError
from pydantic import BaseModel

from lis.inspect import pools
from lis.inspect.cleanup import sweep
from lis.inspect.config import parse_config
from lis.sandbox.base import Sandbox, SandboxError

EFBIG = 27  # sandboxd's answer when a file is over the read limit
EROFS = 30


async def _thread(fn, *args, **kwargs):
    """Run blocking sandbox I/O off the event loop; a cancelled sample does not wait for it
    (sample_cleanup then kills the sandbox, which ends the call)."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), abandon_on_cancel=True)


async def _acquire(pool):
    """A sandbox from ``pool`` for a sample, cancellable while the pool is full: the waiting thread is
    abandoned (so a cancelled run does not wait for a free slot) and gives back what it gets later."""
    lock, state = threading.Lock(), {"abandoned": False, "sb": None}

    def take():
        sb = pool.acquire()
        with lock:
            if not state["abandoned"]:
                state["sb"] = sb
                return sb
        pool.release(sb)  # the sample is gone: nobody else will release it
        return None

    try:
        return await anyio.to_thread.run_sync(take, abandon_on_cancel=True)
    except BaseException:
        with lock:
            state["abandoned"] = True
            got = state["sb"]  # taken just before the cancellation: release it here
        if got is not None:
            threading.Thread(target=pool.release, args=(got,), daemon=True).start()
        raise


@sandboxenv(name="lis")
class LisSandboxEnvironment(SandboxEnvironment):
    """One lis sandbox (Docker container or bubblewrap namespace) per sample."""

    def __init__(self, sb: Sandbox, pool) -> None:
        super().__init__()
        self.sb = sb
        self._pool = pool

    # -- life cycle ---------------------------------------------------------------------------------
    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return parse_config(config)

    @classmethod
    def default_concurrency(cls) -> int | None:
        return pools.default_max_sandboxes()

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        cfg = parse_config(config)
        facts = await _thread(pools.ensure_image, cfg)
        await _thread(pools.open_pool, cfg, facts)

    @classmethod
    async def sample_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                          metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        cfg = parse_config(config)
        pool = await _thread(pools.pool_for, cfg)
        return {"default": cls(await _acquire(pool), pool)}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                             environments: dict[str, SandboxEnvironment], interrupted: bool) -> None:
        for env in environments.values():
            if not isinstance(env, LisSandboxEnvironment):
                continue
            if interrupted:
                env.sb.kill()  # now, even while a call is in progress (it then fails)
            await anyio.to_thread.run_sync(env._pool.release, env.sb)

    @classmethod
    async def task_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool) -> None:
        await anyio.to_thread.run_sync(functools.partial(pools.close_pool, parse_config(config), sweep=cleanup))

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        removed = await anyio.to_thread.run_sync(sweep, id)
        print(f"removed {len(removed)} lis sandbox(es)" + (f": {', '.join(removed)}" if removed else ""))

    # -- the sandbox --------------------------------------------------------------------------------
    def _path(self, file: str) -> str:
        return file if posixpath.isabs(file) else posixpath.join(self.sb.config.workdir, file)

    def _check_user(self, user: str | None) -> None:
        c = self.sb.config
        if user is not None and user not in (c.user, str(c.uid)):
            raise SandboxUserUnsupportedError(
                f"lis sandboxes have one user, {c.user} (uid {c.uid}), by design: cannot run as {user!r}")

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        self._check_user(user)
        if not cmd or not str(cmd[0]):
            raise ValueError("exec needs a command: the argument list is empty")  # was an I/O error from sandboxd
        stdin = input.encode("utf-8") if isinstance(input, str) else input
        limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE  # now: a context variable of this call
        try:
            r = await _thread(self.sb.run, list(cmd), stdin=stdin, cwd=cwd, env=env, timeout=timeout, max_output=limit)
        except SandboxError as e:
            raise SandboxUnavailableError(str(e)) from None
        if r.timed_out:
            raise TimeoutError(f"command timed out after {timeout} s (its processes were killed): {' '.join(cmd)[:200]}")
        stdout = r.stdout.decode("utf-8", "replace")
        stderr = r.stderr.decode("utf-8", "replace")
        if r.output_limited:
            raise OutputLimitExceededError(limit_str=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR,
                                           truncated_output=stdout[:limit])
        code = r.exit_code if r.exit_code is not None else 1
        return ExecResult(success=code == 0, returncode=code, stdout=stdout, stderr=stderr)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        path = self._path(file)
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        try:
            await _thread(self.sb.write_file, path, data)
        except SandboxError as e:
            raise SandboxUnavailableError(str(e)) from None
        except OSError as e:
            if e.errno == EROFS:  # outside the writable folders: the user may not write there
                raise PermissionError(13, "Permission denied (read-only file system)", path) from None
            raise

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> Union[str, bytes]:
        path = self._path(file)
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE  # read at call time (it may be overridden)
        try:
            data = await _thread(self.sb.read_file, path, limit)
        except SandboxError as e:
            raise SandboxUnavailableError(str(e)) from None
        except OSError as e:
            if e.errno == EFBIG:
                raise OutputLimitExceededError(limit_str=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR,
                                               truncated_output=None) from None
            raise
        return data.decode("utf-8") if text else data  # strict: UnicodeDecodeError; CRLF kept

    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        self._check_user(user)
        c = self.sb.config
        if c.backend != "docker":
            raise NotImplementedError("a bubblewrap sandbox has no connection to offer (no docker exec)")
        if self.sb.closed:
            raise ConnectionError(f"sandbox {self.sb.id} is not running")
        host = f"-H {c.engine} " if c.engine else ""
        return SandboxConnection(type="lis", command=f"docker {host}exec -it --workdir {c.workdir} {self.sb.id} bash -l",
                                 container=self.sb.id)

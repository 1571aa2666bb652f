"""lis's sandbox calls over any Inspect sandbox whose provider is not ``lis``.

Most Inspect sandboxes offer ``exec`` of a fresh process, not lis's persistent bash session. Each
call here runs ``bash -c`` with the command as an argument (never pasted into a script, so any text
is safe): it restores a state file, ``eval``s the command and saves the state again, so the working
directory, exported variables and shell functions persist (what does not: docs/inspect.md).

Calls go to Inspect's event loop with ``anyio.from_thread``: use this from a thread started by
``anyio.to_thread`` (the solver's episode thread).
"""
from __future__ import annotations

import functools
import math
import posixpath
import time
from typing import Any

import anyio.from_thread
from inspect_ai.util import OutputLimitExceededError, SandboxEnvironment

from lis.sandbox.base import ExecResult, SandboxConfig, SandboxError

STATE_FILE = "/tmp/.lis-shell-state"
EFBIG = 27
SCRIPT = (
    'if [ -f "$LIS_SHELL_STATE" ]; then . "$LIS_SHELL_STATE" >/dev/null 2>&1; else cd -- "$LIS_WORKDIR" 2>/dev/null; fi\n'
    'eval "$1"\n'
    '__lis_rc=$?\n'
    '{ export -p; declare -f; printf "cd -- %q\\n" "$PWD"; } > "$LIS_SHELL_STATE" 2>/dev/null\n'
    'exit $__lis_rc\n'
)


class ExecShell:
    """The part of :class:`lis.sandbox.base.Sandbox` the agent uses (``exec`` in a persistent shell,
    ``read_file``, ``write_file``, ``put_files``), over an Inspect ``SandboxEnvironment``."""

    def __init__(self, env: SandboxEnvironment, *, workdir: str = "/testbed", kind: str = "inspect"):
        self.env = env
        self.config = SandboxConfig(backend=f"inspect:{kind}", workdir=workdir)
        self.started_s = 0.0
        self.id = kind

    def _call(self, fn, *args: Any, **kwargs: Any) -> Any:
        return anyio.from_thread.run(functools.partial(fn, *args, **kwargs))

    def exec(self, command: str, timeout: float | None = None) -> ExecResult:
        t0 = time.monotonic()
        limit = None if timeout is None else max(1, math.ceil(timeout))
        try:
            r = self._call(self.env.exec, ["bash", "-c", SCRIPT, "lis-shell", command], input="",
                           env={"LIS_SHELL_STATE": STATE_FILE, "LIS_WORKDIR": self.config.workdir}, timeout=limit)
        except TimeoutError:
            return ExecResult("", "", None, timed_out=True, reason="timeout", duration_s=time.monotonic() - t0)
        except OutputLimitExceededError as e:
            return ExecResult(e.truncated_output or "", "", None, output_limited=True, reason="output_limit",
                              duration_s=time.monotonic() - t0)
        except (OSError, UnicodeDecodeError) as e:
            raise SandboxError(f"the sandbox could not run the command: {e}") from None
        except Exception as e:  # noqa: BLE001 - a provider's own failure: the sandbox is unusable
            raise SandboxError(f"the sandbox failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}") from e
        return ExecResult(r.stdout, r.stderr, r.returncode, duration_s=time.monotonic() - t0)

    def read_file(self, path: str, max_bytes: int | None = None) -> bytes:
        try:
            data = self._call(self.env.read_file, path, text=False)
        except OutputLimitExceededError:
            raise OSError(EFBIG, "File too large", path) from None
        if max_bytes is not None and len(data) > max_bytes:
            raise OSError(EFBIG, "File too large", path)
        return data

    def write_file(self, path: str, data: bytes | str, mode: int | None = None) -> None:
        self._call(self.env.write_file, path, data)

    def put_files(self, files: dict[str, str | bytes], dest: str) -> None:
        for name, content in files.items():
            self.write_file(posixpath.join(dest, name), content)

    def copy_in(self, src: Any, dest: str) -> None:
        raise SandboxError("copying a host folder in needs a lis sandbox (--sandbox lis)")

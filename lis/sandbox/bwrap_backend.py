"""Bubblewrap backend, for machines without Docker (many GPU clusters): the image's root filesystem,
read-only, with size-capped tmpfs for /testbed, /tmp, /var/tmp and the home folder, in its own user,
PID, mount, IPC, UTS and (policy ``none``) network namespaces, as the non-root sandbox user, with
``sandboxd`` as PID 1 over stdin/stdout pipes. As strict as Docker: no further user namespaces
(``--disable-userns``, bubblewrap 0.8 or newer), lis's seccomp filter, and the image's root-only
files and folders unreadable (:mod:`lis.sandbox.root_only`).

Limits: memory, CPU and pids through a cgroup when one is writable (root, or a delegated cgroup v2
subtree); otherwise ``RLIMIT_AS`` per process and ``RLIMIT_NPROC``, and ``info["limits"]`` says so.
With a cgroup, the host reads its ``oom_kill`` counter (sandboxd cannot see it here) and a command's
result says "out of memory: limit N MB". Network ``bridge`` is the host's network (no NAT of its own).
"""
from __future__ import annotations

import logging
import os
import select
import shutil
import subprocess
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lis.sandbox.seccomp import bpf_program
from lis.sandbox.base import BOOT, ExecResult, Sandbox, SandboxError, _Channel
from lis.sandbox.cgroups import Cgroup
from lis.paths import cache_dir
from lis.sandbox.root_only import deny_sources, root_only_paths
from lis.sandbox.sandboxd import oom_note

log = logging.getLogger(__name__)

# bwrap's --die-with-parent is PR_SET_PDEATHSIG, which fires when the *thread* that spawned the
# process exits. Sandboxes are started from short-lived threads (pool fillers, runner workers),
# so every bwrap process is spawned by this one long-lived thread instead.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lis-bwrap-spawner")


class _PipeChannel(_Channel):
    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        assert proc.stdout is not None and proc.stdin is not None
        self._out = proc.stdout.fileno()
        os.set_blocking(self._out, False)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv(self, timeout: float) -> bytes:
        r, _, _ = select.select([self._out], [], [], timeout)
        if not r:
            return b""
        try:
            data = os.read(self._out, 1 << 20)
        except BlockingIOError:
            return b""
        if not data:
            raise EOFError("the sandbox closed its output")
        return data

    def close(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                if f:
                    f.close()
            except OSError:
                pass


def bwrap_available() -> str | None:
    return shutil.which("bwrap")


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot make this backend's namespaces here (a real run of ``bwrap … true``), or None."""
    path = bwrap_available()
    if not path:
        return "bwrap not installed"
    argv = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--unshare-user",
            "--disable-userns", "--uid", "1000", "--gid", "1000", "--die-with-parent", "--cap-drop", "ALL", "--", "true"]
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{path} cannot make its namespaces ({str(e)[:120]})"
    if run.returncode == 0:
        return None
    return f"{path} cannot make its namespaces ({' '.join(run.stderr.split())[:120] or f'exit {run.returncode}'})"


class BwrapSandbox(Sandbox):
    def __init__(self, config):
        super().__init__(config)
        self.proc: subprocess.Popen | None = None
        self.cgroup: Cgroup | None = None
        self._oom_seen = 0  # the cgroup's oom_kill count already reported to the agent

    def _argv(self) -> list[str]:
        c, lim = self.config, self.config.limits
        root = Path(c.rootfs)
        if not (root / "usr/bin/python3").exists():
            raise SandboxError(f"no sandbox root filesystem at {root}",
                               "build it with `lis image build` (image.build: bootstrap, image.keep_rootfs: true), "
                               "or use Docker (sandbox.backend; teacher/grpo.sandbox_backend docker or auto)")
        argv = [bwrap_available() or "bwrap", "--ro-bind", str(root), "/", "--dev", "/dev", "--proc", "/proc"]
        denied_file, denied_dir = deny_sources(cache_dir() / "bwrap-deny")
        for path in root_only_paths(root):  # root-only stays root-only: lis/sandbox/root_only.py
            argv += ["--ro-bind", denied_dir if (root / path.lstrip("/")).is_dir() else denied_file, path]
        for path, mb, mode in ((c.workdir, lim.testbed_mb, "0755"), ("/tmp", lim.tmp_mb, "1777"),
                               ("/var/tmp", lim.var_tmp_mb, "1777"), (c.home, lim.home_mb, "0755")):
            argv += ["--perms", mode, "--size", str(mb << 20), "--tmpfs", path]
        argv += ["--unshare-all", "--unshare-user", "--disable-userns", "--uid", str(c.uid), "--gid", str(c.uid),
                 "--hostname", "sandbox",
                 "--as-pid-1", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--chdir", c.workdir,
                 "--clearenv", "--setenv", "HOME", c.home]
        if c.network == "bridge":
            argv += ["--share-net"]
            if Path("/etc/resolv.conf").exists():
                argv += ["--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf"]
        elif c.network != "none":
            raise SandboxError(f"unknown network policy '{c.network}'", "use none or bridge")
        return argv + ["--", "python3", "-c", BOOT]

    def _rlimits(self) -> dict[str, int]:
        rl = super()._rlimits()
        if self.cgroup is None or self.cgroup.kind == "none":
            rl["RLIMIT_AS"] = self.config.limits.memory_mb << 20  # per process: the best we can do
            rl["RLIMIT_NPROC"] = self.config.limits.pids  # the sandbox user's tasks in its user namespace
        return rl

    def _pids_limit(self) -> dict:
        n = self.config.limits.pids
        if self.cgroup is None or self.cgroup.kind == "none":
            return {"limit": n, "name": f"RLIMIT_NPROC {n}"}
        return {"limit": n - 1, "name": f"pids {n}"}  # the cgroup also holds bwrap itself, outside the namespace

    def _start(self) -> _Channel:
        if not bwrap_available():
            raise SandboxError("bubblewrap (bwrap) is not installed", "apt-get install bubblewrap")
        c = self.config
        self.id = f"lis-{c.run_id}-{uuid.uuid4().hex[:8]}"
        argv = self._argv()
        # lis's seccomp filter (lis/sandbox/seccomp.py), read by bwrap from a pipe before it runs sandboxd
        program = bpf_program()
        rfd, wfd = os.pipe()
        os.write(wfd, program)
        os.close(wfd)
        argv[argv.index("--"):argv.index("--")] = ["--seccomp", str(rfd)]
        self.cgroup = Cgroup(self.id, c.limits.memory_mb, c.limits.cpus, c.limits.pids)
        limited = self.cgroup.create()
        self.info["limits"] = f"cgroup {self.cgroup.kind}" if limited else "rlimits (no writable cgroup)"
        try:
            self.proc = _SPAWNER.submit(subprocess.Popen, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, preexec_fn=self.cgroup.enter if limited else None,
                                        bufsize=0, pass_fds=(rfd,)).result()
        except OSError as e:
            self.cgroup.remove()
            raise SandboxError(f"cannot start bubblewrap ({e})", "check `lis doctor`") from None
        finally:
            os.close(rfd)
        threading.Thread(target=self._pump_stderr, daemon=True).start()
        return _PipeChannel(self.proc)

    def _oom_kills(self) -> int | None:
        return self.cgroup.oom_kills() if self.cgroup is not None else None

    def _died_of_oom(self) -> bool:
        return (self._oom_kills() or 0) > self._oom_seen

    def exec(self, command: str, timeout: float | None = None) -> ExecResult:
        """As :meth:`Sandbox.exec`; when the cgroup's OOM kill counter grew, ``reclaim_note`` says
        "out of memory: limit N MB"."""
        r = super().exec(command, timeout)
        n = self._oom_kills()
        if n is not None and n > self._oom_seen:
            note = oom_note(n - self._oom_seen, self.config.limits.memory_mb)
            self._oom_seen = n
            r.reclaim_note = "\n".join(filter(None, (r.reclaim_note, note)))
        return r

    def _pump_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in iter(self.proc.stderr.readline, b""):
            text = line.decode("utf-8", "replace").rstrip()
            if text:
                self._note_stderr(text)
                log.debug("bwrap %s: %s", self.id, text)

    def _destroy(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.kill()  # bwrap --die-with-parent/--as-pid-1: the namespace dies with it
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.cgroup is not None:
            self.cgroup.remove()

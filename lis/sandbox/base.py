"""The Sandbox interface: a small computer the agent works in.

    with make_sandbox(config) as sb:
        r = sb.exec("cd /testbed && ls")        # persistent bash session, per-command timeout
        sb.write_file("/testbed/a.txt", "hi")   # any path the sandbox user may write
        data = sb.read_file("/testbed/answer.txt")
        sb.copy_in(Path("docs"), "/testbed/documents")
        sb.copy_out("/testbed/output", Path("out"))

Every backend runs ``sandboxd`` (lis/sandbox/sandboxd.py) as PID 1 inside the sandbox and talks
to it over one byte channel; a backend only provides the channel (``_Channel``) and the
teardown. ``exec`` never raises for what the command does (timeouts, exit codes, a dead shell
are in the result); it raises SandboxError only when the sandbox itself is gone.
"""
from __future__ import annotations

import io
import json
import os
import logging
import tarfile
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from lis.errors import LisError
from lis.config.sandbox import Limits as LimitsSection
from lis.sandbox import admission, registry
from lis.util.text import safe_text

log = logging.getLogger(__name__)

SANDBOXD = Path(__file__).with_name("sandboxd.py")
# Tiny loader run by the sandbox's python3: reads the supervisor's source from stdin, exactly.
BOOT = ("import os\n"
        "def r(n):\n b=b''\n while len(b)<n:\n  c=os.read(0,n-len(b))\n  if not c: raise SystemExit(0)\n  b+=c\n return b\n"
        "h=b''\nwhile not h.endswith(b'\\n'): h+=r(1)\n"
        "exec(compile(r(int(h)),'sandboxd','exec'),{'__name__':'__main__'})\n")
PROTOCOL_MARGIN_S = 15.0  # host-side deadline beyond a command's own timeout before the sandbox is declared dead
COPY_CHUNK = 4 << 20  # bytes per read of a copy-out (host memory per copy: a few of these)
COPY_OUT_NOTE = "COPY_OUT_NOTE.txt"  # written into a copy-out cut at its cap: what was left out
# The deterministic mode's shell environment (lis.runtime.sandbox_config): coreutils' stdbuf makes every
# process's stderr line-buffered, so two programs running at once cannot cut into each other's lines.
LINE_BUFFERED_STDERR = {"LD_PRELOAD": "/usr/libexec/coreutils/libstdbuf.so", "_STDBUF_E": "L"}


class SandboxError(LisError):
    """The sandbox is unusable (it died, could not start, or broke the protocol)."""


_LIMITS = LimitsSection()


@dataclass
class Limits:
    """Resource limits of one sandbox: the ``sandbox.limits`` model's fields and defaults
    (:class:`lis.config.sandbox.Limits`). The tmpfs quotas are memory: with ``reserve_mb`` they must fit
    ``memory_mb`` (:func:`lis.util.quota.quota_problem`), so a full disk is ENOSPC, not an OOM kill."""

    memory_mb: int = _LIMITS.memory_mb
    cpus: float = _LIMITS.cpus
    pids: int = _LIMITS.pids
    testbed_mb: int = _LIMITS.testbed_mb
    tmp_mb: int = _LIMITS.tmp_mb
    home_mb: int = _LIMITS.home_mb
    var_tmp_mb: int = _LIMITS.var_tmp_mb
    reserve_mb: int = _LIMITS.reserve_mb
    max_output_bytes: int = _LIMITS.max_output_bytes
    nofile: int = _LIMITS.nofile
    copy_out_mb: int = _LIMITS.copy_out_mb


@dataclass
class SandboxConfig:
    """Everything needed to start a sandbox (built from params by lis.sandbox.factory)."""

    backend: str = "docker"                # docker | bwrap
    image: str = ""                        # docker: image tag
    rootfs: str = ""                       # bwrap: root filesystem folder
    user: str = "sandbox"
    uid: int = 1000
    workdir: str = "/testbed"
    network: str = "none"                  # none | bridge
    command_timeout_s: float = 120.0
    lifetime_s: float = 4 * 3600.0         # the sandbox destroys itself after this long
    limits: Limits = field(default_factory=Limits)
    env: dict[str, str] = field(default_factory=dict)
    run_id: str = "adhoc"
    engine: str | None = None              # docker: engine URL (None = local default)
    max_starting: int = 16                 # host-wide: sandboxes starting at once (lis.sandbox.admission; 0: no limit)
    max_starts_per_s: float = 20.0         # host-wide: sandbox starts per second

    @property
    def home(self) -> str:
        return f"/home/{self.user}"


@dataclass
class ExecResult:
    stdout: str
    stderr: str
    exit_code: int | None          # None when the command was killed before the shell reported one
    timed_out: bool = False
    output_limited: bool = False   # produced more than limits.max_output_bytes: stopped
    shell_restarted: bool = False  # the shell died or hung and was replaced (cwd, variables reset)
    reason: str | None = None      # timeout | output_limit | shell_exited | stuck | error (sandboxd refused it)
    duration_s: float = 0.0
    stdout_dropped: int = 0        # bytes cut from the middle of a huge stream
    stderr_dropped: int = 0
    reclaimed: int = 0             # processes killed because the process limit was exhausted
    reclaim_note: str | None = None  # "[sandbox] the process limit (pids 128) was exhausted: killed ..."

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@dataclass
class RunResult:
    """What :meth:`Sandbox.run` (one fresh process) gives back: raw bytes, each stream at most
    ``max_output`` + 1 bytes (one more than allowed: ``output_limited`` says it was cut)."""

    exit_code: int | None          # 128+n after a death by signal n; None when it never ended
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    output_limited: bool = False
    missing: bool = False          # no such program (exit 127)
    duration_s: float = 0.0


class _Channel(ABC):
    """A byte pipe to sandboxd."""

    @abstractmethod
    def send(self, data: bytes) -> None: ...

    @abstractmethod
    def recv(self, timeout: float) -> bytes:
        """Some bytes, b"" on timeout; raises EOFError when the sandbox is gone."""

    @abstractmethod
    def close(self) -> None: ...


class Sandbox(ABC):
    """A running sandbox. Thread-safe: requests are serialised."""

    def __init__(self, config: SandboxConfig):
        self.config = config
        self.id = ""
        self._chan: _Channel | None = None
        self._buf = bytearray()
        self._lock = threading.RLock()   # one request at a time
        self._close_lock = threading.Lock()  # not the request's: closing never waits for a command
        self._closed = False
        self._seq = 0
        self.info: dict = {}
        self.started_s = 0.0
        self.started_at = 0.0  # time.monotonic() when the start ended
        self.admission_wait_s = 0.0
        self._stderr_tail: list[str] = []  # the sandbox's last stderr lines (sandboxd tracebacks, bwrap errors)

    # -- lifecycle, implemented by backends -------------------------------------------------------
    @abstractmethod
    def _start(self) -> _Channel:
        """Start the sandbox with ``python3 -c BOOT`` as PID 1; return the channel to it."""

    @abstractmethod
    def _destroy(self) -> None:
        """Remove the sandbox and everything it holds; idempotent; never raises."""

    def start(self) -> "Sandbox":
        """Start the sandbox once the host admits it (:mod:`lis.sandbox.admission`);
        ``admission_wait_s``: the wait for that; ``started_s``: the start itself."""
        with admission.admit(self.config.max_starting, self.config.max_starts_per_s) as waited:
            self.admission_wait_s = waited
            t0 = time.monotonic()
            registry.register(self)
            try:
                self._chan = self._start()
                src = SANDBOXD.read_bytes()
                self._chan.send(str(len(src)).encode() + b"\n" + src)
                cfg = {"workdir": self.config.workdir, "lifetime_s": self.config.lifetime_s,
                       "env": self._env(), "rlimits": self._rlimits(), "pids": self._pids_limit(),
                       "memory_mb": self.config.limits.memory_mb}
                hello, _ = self._request({"op": "hello", "config": cfg}, timeout=60)
                self.info.update(hello)
            except BaseException:
                self.close()
                raise
            self.started_at = time.monotonic()
            self.started_s = self.started_at - t0
        return self

    def _env(self) -> dict[str, str]:
        c = self.config
        env = {"HOME": c.home, "USER": c.user, "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1", "TERM": "dumb",
               "PATH": f"{c.home}/.local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
        env.update(c.env)
        return env

    def _rlimits(self) -> dict[str, int]:
        return {"RLIMIT_NOFILE": self.config.limits.nofile, "RLIMIT_CORE": 0}

    def _pids_limit(self) -> dict:
        """For sandboxd's reclaim: how many tasks of the sandbox's PID namespace fit (``limit``) and how to
        name the limit to the agent (``name``)."""
        n = self.config.limits.pids
        return {"limit": n, "name": f"pids {n}"}

    def close(self) -> None:
        """Destroy the sandbox. Safe to call twice, from any thread and from signal handlers; it does
        not wait for a request in progress (a command may run for its whole timeout): that request
        fails with SandboxError."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        try:
            if self._chan is not None:
                self._chan.close()
        except Exception:
            pass
        self._destroy()
        registry.unregister(self)

    def kill(self) -> None:
        """Destroy the sandbox now, from any thread (cancelling an episode while its command runs): the
        request in progress fails with SandboxError, not blamed on the sandbox's memory."""
        self._killed = True  # what follows is our doing, not the sandbox's memory
        self._destroy()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "Sandbox":
        return self if self._chan is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- protocol ---------------------------------------------------------------------------------
    def _request(self, header: dict, *payloads: bytes, timeout: float) -> tuple[dict, list[bytes]]:
        with self._lock:
            if self._closed or self._chan is None:
                raise SandboxError(f"sandbox {self.id or '?'} is closed")
            self._seq += 1
            header = {**header, "id": self._seq, "sizes": [len(p) for p in payloads]}
            try:
                self._chan.send(json.dumps(header).encode() + b"\n" + b"".join(payloads))
                resp = self._read_message(time.monotonic() + timeout)
            except (EOFError, OSError) as e:
                self._fail(f"the sandbox went away during {header['op']} ({type(e).__name__}: {e})", gone=True)
            if resp[0].get("id") != self._seq:
                self._fail(f"protocol out of step (got reply {resp[0].get('id')} for request {self._seq})")
            return resp

    def _note_stderr(self, text: str) -> None:
        text = text.strip()
        if text:
            self._stderr_tail = (self._stderr_tail + [text])[-5:]

    def _oom_kills(self) -> int | None:
        """How many processes the kernel killed in this sandbox for want of memory, where the host
        can tell (None: it cannot). Backends override."""
        return None

    def _died_of_oom(self) -> bool:
        """Whether the sandbox's memory ran out before it went away (asked after a failure, before
        teardown). Backends override."""
        return bool(self._oom_kills())

    def _fail(self, why: str, gone: bool = False):
        sid = self.id
        try:
            oom = gone and not self._closed and not getattr(self, "_killed", False) and self._died_of_oom()
        except Exception:
            oom = False
        self.close()
        if oom:
            why = (f"out of memory: limit {self.config.limits.memory_mb} MB (the kernel killed the sandbox's "
                   f"supervisor; files in /testbed, /tmp and home count against this limit) — {why}")
        if self._stderr_tail:
            why = f"{why} — it said: {' | '.join(self._stderr_tail)[-300:]}"
        raise SandboxError(f"sandbox {sid}: {why}", "the episode cannot continue; the next one gets a fresh sandbox")

    def _read_message(self, deadline: float) -> tuple[dict, list[bytes]]:
        while b"\n" not in self._buf:
            self._fill(deadline)
        i = self._buf.index(b"\n")
        header = json.loads(bytes(self._buf[:i]))
        del self._buf[:i + 1]
        payloads = []
        for n in header.get("sizes", []):
            while len(self._buf) < n:
                self._fill(deadline)
            payloads.append(bytes(self._buf[:n]))
            del self._buf[:n]
        return header, payloads

    def _fill(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise OSError("no answer from sandboxd before the deadline")
        assert self._chan is not None
        self._buf += self._chan.recv(min(left, 1.0))

    # -- the public interface ---------------------------------------------------------------------
    def exec(self, command: str, timeout: float | None = None) -> ExecResult:
        """Run ``command`` in the persistent bash session (cwd, exports, functions persist).

        ``timeout`` (default config.command_timeout_s) kills the command's processes, not the
        session; a shell that died or hung is restarted and the result says so. An exhausted process
        limit is reclaimed by sandboxd (``reclaimed``, ``reclaim_note``)."""
        timeout = float(timeout if timeout is not None else self.config.command_timeout_s)
        command = safe_text(command)[0]  # lone surrogates cannot reach a shell: U+FFFD instead
        h, payloads = self._request({"op": "exec", "cmd": command, "timeout": timeout,
                                     "max_output": self.config.limits.max_output_bytes},
                                    timeout=timeout + PROTOCOL_MARGIN_S)
        if not h.get("ok"):  # the status first: a refused request carries no output to unpack
            # sandboxd answered, so the sandbox lives on: the command's failure is the result
            return ExecResult(stdout="", stderr=f"[sandbox] the command could not run: {h.get('error')}",
                              exit_code=None, reason="error", duration_s=float(h.get("duration_s") or 0.0))
        if len(payloads) != 2:
            self._fail(f"exec answered with {len(payloads)} payload(s), not stdout and stderr")
        out, err = payloads
        return ExecResult(stdout=out.decode("utf-8", "replace"), stderr=err.decode("utf-8", "replace"),
                          exit_code=h["exit_code"], timed_out=h["timed_out"], output_limited=h["output_limited"],
                          shell_restarted=h["shell_restarted"], reason=h["reason"], duration_s=h["duration_s"],
                          stdout_dropped=h.get("stdout_dropped", 0), stderr_dropped=h.get("stderr_dropped", 0),
                          reclaimed=h.get("reclaimed", 0), reclaim_note=h.get("reclaim_note"))

    def run(self, argv: list[str], stdin: bytes | None = None, cwd: str | None = None,
            env: dict[str, str] | None = None, timeout: float | None = None,
            max_output: int | None = None) -> RunResult:
        """Run ``argv`` as a fresh process, sharing no state with the persistent shell: ``stdin``
        bytes (None: /dev/null), ``cwd`` relative to the working directory, ``env`` over the
        sandbox's. Past ``timeout`` seconds (None: none) or ``max_output`` bytes of a stream (default
        ``limits.max_output_bytes``) every process of its session is killed (``timed_out``,
        ``output_limited``). A missing program is exit 127 (``missing``); a file that is not
        executable raises PermissionError."""
        cap = int(max_output if max_output is not None else self.config.limits.max_output_bytes)
        header = {"op": "run", "argv": [str(a) for a in argv], "cwd": cwd, "env": env or {},
                  "timeout": timeout, "max_output": cap, "stdin": stdin is not None}
        payloads = (bytes(stdin),) if stdin is not None else ()
        wait = (float(timeout) if timeout is not None else self.config.lifetime_s) + PROTOCOL_MARGIN_S
        h, data = self._request(header, *payloads, timeout=wait + len(stdin or b"") / 20e6)
        if not h.get("ok"):
            self._raise_os_error(h, str(argv[0]) if argv else "")
        if len(data) != 2:
            self._fail(f"run answered with {len(data)} payload(s), not stdout and stderr")
        return RunResult(exit_code=h.get("exit_code"), stdout=data[0], stderr=data[1],
                         timed_out=bool(h.get("timed_out")), output_limited=bool(h.get("output_limited")),
                         missing=bool(h.get("missing")), duration_s=float(h.get("duration_s") or 0.0))

    @staticmethod
    def _raise_os_error(h: dict, path: str):
        """Re-raise the sandbox's error as the OSError subclass its errno maps to (FileNotFoundError,
        PermissionError, IsADirectoryError, ...); errno 27 (EFBIG) marks our own size limits."""
        code = h.get("errno") or 5
        text = h.get("error", "") if code == 27 else os.strerror(code)
        raise OSError(code, text, path)

    def write_file(self, path: str, data: bytes | str, mode: int | None = None) -> None:
        """Write ``data`` to ``path`` as the sandbox user (parents created). Raises OSError subclasses
        as the sandbox reports them (PermissionError, OSError ENOSPC past the quota, ...)."""
        payload = data.encode() if isinstance(data, str) else bytes(data)
        h, _ = self._request({"op": "write", "path": path, "mode": mode}, payload,
                             timeout=60 + len(payload) / 20e6)
        if not h.get("ok"):
            self._raise_os_error(h, path)

    def read_file(self, path: str, max_bytes: int | None = None) -> bytes:
        """The bytes of ``path``. Raises FileNotFoundError, IsADirectoryError, PermissionError, or
        OSError(EFBIG) when the file is larger than ``max_bytes``."""
        h, payloads = self._request({"op": "read", "path": path, "max_bytes": max_bytes}, timeout=120)
        if not h.get("ok"):
            self._raise_os_error(h, path)
        return payloads[0]

    def copy_in(self, src: str | Path, dest: str) -> None:
        """Copy a host file or the contents of a host folder into the folder ``dest``."""
        src = Path(src)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:") as tf:
            if src.is_dir():
                for p in sorted(src.iterdir()):
                    tf.add(p, arcname=p.name)
            else:
                tf.add(src, arcname=src.name)
        self._put_tar(buf.getvalue(), dest)

    def put_files(self, files: dict[str, str | bytes], dest: str) -> None:
        """Write ``{relative name: content}`` under the folder ``dest`` in one transfer."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:") as tf:
            for name, content in files.items():
                data = content.encode() if isinstance(content, str) else content
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
                tf.addfile(info, io.BytesIO(data))
        self._put_tar(buf.getvalue(), dest)

    def _put_tar(self, data: bytes, dest: str) -> None:
        h, _ = self._request({"op": "put_tar", "dest": dest}, data, timeout=60 + len(data) / 20e6)
        if not h.get("ok"):
            self._raise_os_error(h, dest)

    def copy_out(self, src: str, dest: str | Path, max_bytes: int | None = None, first: tuple[str, ...] = ()) -> Path:
        """Copy the file or folder ``src`` out of the sandbox to ``dest/<name of src>``, streamed to
        disk chunk by chunk (host memory stays bounded whatever the sandbox wrote).

        At most ``max_bytes`` of file content (default: ``limits.copy_out_mb``); the files named in
        ``first`` (sandbox paths, e.g. the answer file) go first. Past the cap a file that does not fit
        is left out, the next ones still tried, and ``COPY_OUT_NOTE`` (in the copied folder) lists what
        was left out; ``info["copy_out"]`` counts both.

        The entries are hostile: each passes tarfile's ``data`` filter (no absolute paths, no ``..``,
        no links out, no device files); links are made last, and no file is written through a link."""
        cap = (self.config.limits.copy_out_mb << 20) if max_bytes is None else int(max_bytes)
        h, payloads = self._request({"op": "walk", "src": src}, timeout=300)
        if not h.get("ok"):
            self._raise_os_error(h, src)
        entries = [json.loads(line) for line in payloads[0].decode("utf-8", "surrogateescape").splitlines() if line]
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        root = os.path.realpath(dest)
        src_dir = src.rstrip("/") or "/"
        parent = os.path.dirname(src_dir)
        wanted = [os.path.relpath(f, parent) if f.startswith("/") else os.path.join(os.path.basename(src_dir), f)
                  for f in first]
        files = [e for e in entries if e["t"] == "f"]
        files.sort(key=lambda e: e["p"] not in wanted)  # stable: the named files first, the rest in walk order
        skipped: list[str] = []
        left: list[dict] = []
        copied = used = 0

        def safe(e: dict) -> str | None:
            info = tarfile.TarInfo(e["p"])
            info.mode = e.get("m", 0o644) & 0o777
            if e["t"] == "d":
                info.type = tarfile.DIRTYPE
            elif e["t"] == "l":
                info.type, info.linkname = tarfile.SYMTYPE, e.get("l", "")
            elif e["t"] != "f":
                info.type = tarfile.FIFOTYPE
            try:
                tarfile.data_filter(info, root)
            except tarfile.FilterError as err:
                skipped.append(f"{e['p']} ({type(err).__name__})")
                return None
            path = os.path.join(root, os.path.normpath(e["p"]))
            real = os.path.realpath(os.path.dirname(path))  # no writing through a link made earlier
            if os.path.commonpath([real, root]) != root:
                skipped.append(f"{e['p']} (outside)")
                return None
            return path

        for e in entries:
            if e["t"] == "d" and (path := safe(e)) is not None:
                os.makedirs(path, exist_ok=True)
        for e in files:
            if used + e["s"] > cap:
                left.append(e)
                continue
            if (path := safe(e)) is None:
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.islink(path) or os.path.isdir(path):
                skipped.append(f"{e['p']} (in the way)")
                continue
            used += self._copy_file_out(os.path.join(parent, e["p"]), path, e["s"])
            os.chmod(path, (e.get("m", 0o644) & 0o755) | 0o600)  # as tarfile's data filter: no setuid, no g/o write
            copied += 1
        for e in entries:
            if e["t"] == "l" and (path := safe(e)) is not None and not os.path.lexists(path):
                os.symlink(e["l"], path)
        if skipped:
            log.warning("copy_out %s: skipped %d unsafe entr(ies): %s", src, len(skipped), ", ".join(skipped[:5]))
        note = None
        if left or h.get("more"):
            top = Path(root) / os.path.basename(src_dir)
            note = (top if top.is_dir() and not top.is_symlink() else Path(root)) / COPY_OUT_NOTE
            lines = [f"Copy-out of {src} stopped at its cap (sandbox.limits.copy_out_mb: {cap >> 20} MB): "
                     f"{copied} file(s), {used} bytes copied; {len(left) + h.get('more', 0)} entr(ies), "
                     f"{sum(e['s'] for e in left)} bytes left out:"]
            lines += [f"{e['p']}\t{e['s']} bytes" for e in left[:10000]]
            if len(left) > 10000:
                lines.append(f"... and {len(left) - 10000} more files")
            if h.get("more"):
                lines.append(f"... and {h['more']} more entries that were not even listed")
            note.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="replace")
            log.debug("copy_out %s: %d entr(ies) left out past copy_out_mb (%d MB); see %s", src,
                        len(left) + h.get("more", 0), cap >> 20, note)
        self.info["copy_out_skipped"] = skipped
        self.info["copy_out"] = {"files": copied, "bytes": used, "left_out": len(left) + h.get("more", 0),
                                 "left_out_bytes": sum(e["s"] for e in left), "cap_bytes": cap,
                                 "note": str(note) if note else None}
        return dest

    def _copy_file_out(self, src: str, path: str, size: int) -> int:
        """Stream ``size`` bytes of the sandbox file ``src`` into the new host file ``path``, chunk by
        chunk; returns the bytes written (fewer when the file shrank meanwhile, never more than ``size``)."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        done = 0
        try:
            while done < size:
                h, payloads = self._request({"op": "read_range", "path": src, "offset": done,
                                             "length": min(COPY_CHUNK, size - done)}, timeout=120)
                if not h.get("ok"):
                    log.warning("copy_out %s: %s", src, h.get("error"))
                    break
                if not payloads[0]:
                    break
                view = memoryview(payloads[0])
                while view:
                    view = view[os.write(fd, view):]
                done += len(payloads[0])
        finally:
            os.close(fd)
        return done

    def restart_shell(self) -> None:
        self._request({"op": "restart"}, timeout=30)

    def ping(self) -> bool:
        try:
            h, _ = self._request({"op": "ping"}, timeout=10)
            return bool(h.get("ok"))
        except SandboxError:
            return False

"""Start a server program (a command line and a health URL) when it is not already up, share it, stop it.

    from lis.util import server_process
    srv = server_process.ensure("qwen3-4b", ["vllm", "serve", ...], "http://127.0.0.1:8000/health",
                                state_dir=Path("logs/serve"), startup_timeout_s=1800)
    ...                             # every later ensure() of the same name in this process returns srv
    server_process.release_all()    # also at exit, on SIGINT/SIGTERM, after an exception

A server that already answers its health URL is reused and never stopped by us (the user's own, or
another lis process's). Otherwise the command starts in its own process group, logging to
``<state_dir>/<name>.log``; one that exits, or does not answer within ``startup_timeout_s``, is one
LisError naming the command and its log.

Across processes (Snakemake jobs at once), in ``state_dir``: ``<name>.lock`` serialises the
check-and-start and the stop; every user holds a shared lock on ``<name>.users``; ``<name>.pid``
records a server lis started, with its command and ``identity`` (the weights' fingerprint): one
started for other weights or another command is restarted, never reused. The last user out (the one
that can lock ``.users`` exclusively) stops a server lis started, whoever started it; one without a
``.pid`` file (the user's) is never stopped. The kernel drops a dead process's locks, so a SIGKILLed
user keeps no server alive for others.

``linger_s`` > 0: the last user out leaves the server up that long, so the next job of the same model
reuses it instead of loading the weights again; a detached reaper (``python -m lis.util.server_process
reap``) stops it once idle. A cancelled process (SIGINT/SIGTERM) stops its servers at once. Exit paths:
:func:`release_all` at exit (atexit), and a SIGINT/SIGTERM handler chained in front of the process's own
(``lis.sandbox.registry``'s) that releases before a second signal's hard exit.
"""
from __future__ import annotations

import atexit
import fcntl
import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from lis.errors import LisError
from lis.util import cancel

log = logging.getLogger(__name__)

_servers: dict[str, "Server"] = {}
_lock = threading.Lock()
_chained = False


def healthy(url: str, timeout: float = 2.0) -> bool:
    """True when ``url`` answers HTTP 2xx."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return 200 <= r.status < 300
    except Exception:  # noqa: BLE001 - refused, reset, timeout, 4xx/5xx: not healthy
        return False


def group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies waiting for their parent do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def stop_group(pgid: int, proc: subprocess.Popen | None = None, grace_s: float = 20.0) -> None:
    """SIGTERM the process group, SIGKILL what is left after ``grace_s``; reap ``proc`` if ours."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if proc is not None:
            proc.poll()
        if not group_alive(pgid):
            break
        time.sleep(0.1)
    else:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        end = time.monotonic() + 5
        while group_alive(pgid) and time.monotonic() < end:
            if proc is not None:
                proc.poll()
            time.sleep(0.05)
    if proc is not None:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


@dataclass
class Server:
    """One server this process uses; ``started`` is True when this process started it."""

    name: str
    command: list[str]
    health_url: str
    log_path: Path
    state_dir: Path
    started: bool = False
    proc: subprocess.Popen | None = None
    linger_s: float = 0.0
    _users_fd: int | None = field(default=None, repr=False)

    def _file(self, suffix: str) -> Path:
        return self.state_dir / f"{self.name}{suffix}"

    def release(self, linger: bool = True) -> None:
        """Stop using the server; the last user of a server lis started stops it, or with ``linger_s``
        (and ``linger``, and no cancel) leaves it to a reaper."""
        if self._users_fd is None:
            return
        with _flock(self._file(".lock"), fcntl.LOCK_EX):
            fcntl.flock(self._users_fd, fcntl.LOCK_UN)
            try:
                fcntl.flock(self._users_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                last = True
            except OSError:
                last = False
            if last:
                rec = _read_pid(self._file(".pid"))
                if rec is not None and linger and self.linger_s > 0 and not cancel.requested():
                    rec.update(idle_since=time.time(), linger_s=self.linger_s)
                    self._file(".pid").write_text(json.dumps(rec) + "\n")
                    _spawn_reaper(self)
                    log.info("model server %s stays up %g s for the next job of its model (process group %s)",
                             self.name, self.linger_s, rec["pgid"])
                elif rec is not None:
                    who = "ours" if self.started else f"started by process {rec.get('owner')}"
                    log.info("stopping model server %s (process group %s, %s)", self.name, rec["pgid"], who)
                    stop_group(int(rec["pgid"]), self.proc)
                    self._file(".pid").unlink(missing_ok=True)
            os.close(self._users_fd)
            self._users_fd = None


class _flock:
    def __init__(self, path: Path, how: int):
        self.path, self.how = path, how

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, self.how)
        return self.fd

    def __exit__(self, *exc):
        os.close(self.fd)  # closing drops the lock


def _read_pid(path: Path) -> dict | None:
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or not isinstance(rec.get("pgid"), int) or not group_alive(rec["pgid"]):
        path.unlink(missing_ok=True)  # a server that is gone (killed, crashed)
        return None
    return rec


def ensure(name: str, command: Sequence[str], health_url: str, *, state_dir: Path, startup_timeout_s: float = 600,
           env: dict[str, str] | None = None, cwd: Path | None = None, linger_s: float = 0.0,
           identity: str | None = None) -> Server:
    """The server ``name``, up and healthy: reused when it answers (in this process: the same one),
    else started from ``command``. A server lis started for another ``identity`` or command is
    restarted instead of reused. Raises LisError when it cannot start or stays unhealthy."""
    with _lock:
        if name in _servers:
            return _servers[name]
        _chain_signal_handlers()
        state_dir = Path(state_dir)
        srv = Server(name, list(command), health_url, state_dir / f"{name}.log", state_dir, linger_s=float(linger_s))
        with _flock(srv._file(".lock"), fcntl.LOCK_EX):
            users = os.open(srv._file(".users"), os.O_RDWR | os.O_CREAT, 0o644)
            try:
                rec = _read_pid(srv._file(".pid"))
                if (identity is not None and rec is not None and healthy(health_url)
                        and (rec.get("command") != srv.command or rec.get("identity") != identity)):
                    _stop_for_other(srv, rec, users)
                if healthy(health_url):
                    log.info("model server %s answers at %s: reusing it", name, health_url)
                    if rec is not None and "idle_since" in rec:  # lingering: in use again (its reaper lets it be)
                        rec.pop("idle_since")
                        srv._file(".pid").write_text(json.dumps(rec) + "\n")
                else:
                    _start(srv, startup_timeout_s, env, cwd, identity)
            except BaseException:
                os.close(users)
                raise
            fcntl.flock(users, fcntl.LOCK_SH)
            srv._users_fd = users
        _servers[name] = srv
        return srv


def _stop_for_other(srv: Server, rec: dict, users: int) -> None:
    """A server lis started answers, but for other weights or another command: stop it (under the
    lock), unless another process still uses it."""
    try:
        fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise LisError(f"model server {srv.name} at {srv.health_url} serves other weights or another command "
                       f"than this job asks, and another lis process still uses it",
                       "wait for that job to finish, or give this models entry its own port") from None
    fcntl.flock(users, fcntl.LOCK_UN)
    log.info("model server %s (process group %s) serves other weights or another command: restarting it",
             srv.name, rec["pgid"])
    stop_group(int(rec["pgid"]))
    srv._file(".pid").unlink(missing_ok=True)


def _spawn_reaper(srv: Server) -> None:
    """A detached process that stops the lingering server ``srv`` once it has been idle for its linger."""
    with open(srv.log_path, "ab") as out:
        subprocess.Popen([sys.executable, "-m", "lis.util.server_process", "reap", str(srv.state_dir), srv.name],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out, start_new_session=True,
                         cwd=Path(__file__).resolve().parents[2])


def reap(state_dir: Path, name: str, poll_s: float = 5.0) -> None:
    """The reaper's loop: stop the server ``name`` once idle for its ``linger_s`` with nobody using it;
    return when it is gone or in use again (the next last user out starts another reaper)."""
    pid_file, lock = Path(state_dir) / f"{name}.pid", Path(state_dir) / f"{name}.lock"
    while True:
        rec = _read_pid(pid_file)
        if rec is None or "idle_since" not in rec:
            return
        wait = rec["idle_since"] + rec["linger_s"] - time.time()
        if wait > 0:
            time.sleep(min(wait, poll_s))
            continue
        with _flock(lock, fcntl.LOCK_EX):
            users = os.open(Path(state_dir) / f"{name}.users", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                try:
                    fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    return  # in use again
                rec = _read_pid(pid_file)
                if rec is None or "idle_since" not in rec:
                    return
                if rec["idle_since"] + rec["linger_s"] > time.time():
                    continue  # used and released again meanwhile: a later deadline
                log.info("model server %s idle for %g s: stopping it", name, rec["linger_s"])
                stop_group(int(rec["pgid"]))
                pid_file.unlink(missing_ok=True)
                return
            finally:
                os.close(users)


def _start(srv: Server, timeout: float, env: dict[str, str] | None, cwd: Path | None,
           identity: str | None = None) -> None:
    if not srv.command:
        raise LisError(f"model server {srv.name}: nothing answers {srv.health_url} and there is no command to start",
                       "start the server yourself or give the models entry a serve: block")
    cmdline = shlex.join(srv.command)
    srv.log_path.parent.mkdir(parents=True, exist_ok=True)
    log.info("starting model server %s: %s (log %s)", srv.name, cmdline, srv.log_path)
    with open(srv.log_path, "ab") as out:
        out.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} lis starts: {cmdline}\n".encode())
        out.flush()
        try:
            proc = subprocess.Popen(srv.command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=None if env is None else {**os.environ, **env},
                                    cwd=cwd)
        except OSError as e:
            raise LisError(f"model server {srv.name}: cannot run `{cmdline}` ({e.strerror or e})",
                           "install the server program (vLLM: bash scripts/setup.sh vllm) or fix serve.command") from None
    srv.proc, srv.started = proc, True
    srv._file(".pid").write_text(json.dumps({"pid": proc.pid, "pgid": proc.pid, "owner": os.getpid(),
                                             "command": srv.command, "health_url": srv.health_url,
                                             "identity": identity}) + "\n")
    deadline = time.monotonic() + timeout
    try:
        while not healthy(srv.health_url):
            if proc.poll() is not None:
                raise LisError(f"model server {srv.name} exited with code {proc.returncode} before answering "
                               f"{srv.health_url} (command: {cmdline}); its log: {srv.log_path}",
                               "read the log; fix serve: in the models entry")
            if time.monotonic() > deadline:
                raise LisError(f"model server {srv.name} did not answer {srv.health_url} within {timeout:g} s "
                               f"(command: {cmdline}); its log: {srv.log_path}",
                               "read the log; raise serve.startup_timeout_s if it is only slow")
            cancel.sleep(0.25)
    except BaseException:
        stop_group(proc.pid, proc)
        srv._file(".pid").unlink(missing_ok=True)
        raise
    log.info("model server %s is up (%s)", srv.name, srv.health_url)


def in_use(name: str) -> bool:
    """Whether this process already uses the server ``name``."""
    with _lock:
        return name in _servers


def release(name: str) -> None:
    """Release the server ``name`` (see :meth:`Server.release`)."""
    with _lock:
        srv = _servers.pop(name, None)
    if srv is not None:
        srv.release()


def release_all(linger: bool = True) -> None:
    """Release every server this process uses (``linger=False``: stop them now)."""
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for srv in servers:
        try:
            srv.release(linger)
        except Exception as e:  # noqa: BLE001 - the others must go too
            log.warning("stopping model server %s failed: %s", srv.name, e)


def _chain_signal_handlers() -> None:
    """On SIGINT/SIGTERM run the handler that was there (main thread only), releasing the servers first
    when nothing unwinds the process: a second signal may end it at once (``os._exit``), or no handler."""
    global _chained
    if _chained or threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        prev = signal.getsignal(sig)

        def handler(signum, frame, prev=prev):
            if cancel.requested() or not callable(prev):  # a second signal, or nothing to unwind us
                release_all(linger=False)
            if callable(prev):
                prev(signum, frame)
            elif prev == signal.SIG_DFL:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)
        signal.signal(sig, handler)
    _chained = True


atexit.register(release_all)

if __name__ == "__main__" and sys.argv[1:2] == ["reap"]:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s reaper: %(message)s")
    reap(Path(sys.argv[2]), sys.argv[3])

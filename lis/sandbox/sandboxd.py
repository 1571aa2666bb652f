"""sandboxd — the supervisor inside every lis sandbox. Standard library only; sent to the sandbox's
``python3`` over stdin when the sandbox starts (so it always matches the host's code).

It runs as PID 1 of the sandbox's PID namespace, as the sandbox user, with no capabilities
(``kill -9 -1`` from the agent cannot reach it), and reaps orphans. It owns the agent's persistent
bash session, enforces the per-command timeout and output cap by killing the command's processes
(never itself), restarts the shell when it dies, reclaims the sandbox when its process limit is
exhausted (``Shell.run``), and serves file operations.

Protocol on stdin/stdout, one request at a time: a JSON header line, then the payload bytes whose
lengths the header lists in ``sizes``; responses have the same shape. Ops: ``exec`` (persistent
shell), ``run`` (a fresh process: ``Runner``), ``write``, ``read``, ``put_tar``, ``walk``,
``read_range``, ``restart``, ``ping``. Copy-out is ``walk`` then ``read_range`` chunk by chunk: no
side holds a whole file in memory (inside the sandbox that counts against its memory limit).

Memory: the shell and everything it starts get ``oom_score_adj`` 1000, so out of memory the kernel
kills the agent's commands, not sandboxd; where the memory cgroup is visible (Docker) an OOM kill
during a command is counted and the result says "out of memory: limit N MB" (``reclaim_note``).
"""
import io
import json
import os
import resource
import secrets
import select
import signal
import stat
import subprocess
import sys
import tarfile
import time

SHELL_ENV_KEEP = ("HOME", "PATH", "LANG", "LC_ALL", "USER", "PYTHONUNBUFFERED", "PIP_DISABLE_PIP_VERSION_CHECK",
                  "MPLBACKEND", "TERM", "TZ")
GRACE_S = 2.0  # after killing a command, how long the shell has to come back before it is restarted
PIDS_SLACK = 2  # the process limit counts as exhausted when at most this many more tasks fit
PIDS_LOOK_S = 1.0  # how long a sandbox over half its process limit is watched for reaching it
WALK_MAX_ENTRIES = 50000  # entries ``walk`` lists; the rest are counted, not listed
READ_RANGE_MAX = 8 << 20  # the most bytes one ``read_range`` answers with
OOM_FILES = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")  # cgroup v2, v1


def oom_kills(paths=OOM_FILES):
    """How many processes the kernel has killed in this sandbox's memory cgroup for want of memory
    (the ``oom_kill`` counter of the first readable of ``paths``), or None where the cgroup is not
    visible (bubblewrap: the host reads it)."""
    for path in paths:
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def oom_note(killed, limit_mb):
    """What the agent is told after the kernel killed ``killed`` processes of its command for want of memory."""
    return (f"[sandbox] out of memory: limit {limit_mb} MB. The kernel killed {killed} process(es) of this command. "
            f"Files in /testbed, /tmp and the home folder count against this limit too: delete what you do not need.")


def _non_dumpable():
    """Processes of the same user may not read our memory or file descriptors (/proc/1/fd)."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:
        pass


class Channel:
    """Framed messages on fd 0 / fd 1."""

    def __init__(self):
        self.buf = bytearray()

    def _fill(self, timeout):
        r, _, _ = select.select([0], [], [], timeout)
        if not r:
            return False
        data = os.read(0, 1 << 20)
        if not data:
            raise EOFError
        self.buf += data
        return True

    def recv(self, timeout):
        """(header, payloads) or None on timeout; EOFError when the host is gone."""
        while b"\n" not in self.buf:
            if not self._fill(timeout):
                return None
        i = self.buf.index(b"\n")
        header = json.loads(bytes(self.buf[:i]))
        del self.buf[:i + 1]
        payloads = []
        for n in header.get("sizes", []):
            while len(self.buf) < n:
                self._fill(None)
            payloads.append(bytes(self.buf[:n]))
            del self.buf[:n]
        return header, payloads

    @staticmethod
    def send(header, *payloads):
        header["sizes"] = [len(p) for p in payloads]
        data = json.dumps(header).encode() + b"\n" + b"".join(payloads)
        view = memoryview(data)
        while view:
            n = os.write(1, view)
            view = view[n:]


def _proc_stat(pid):
    """(ppid, pgrp, session) of a live process; None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rindex(b")") + 2:].split()
    if rest[0] == b"Z":
        return None
    return int(rest[1]), int(rest[2]), int(rest[3])


def _pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _tasks():
    """The tasks (threads, zombies included) of our PID namespace: what a pids limit counts."""
    n = 0
    for pid in _pids():
        try:
            n += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            pass
    return n


def _shell_session():
    """The session of the agent's persistent shell (None when it is not running): its processes are
    never a ``run`` call's to kill."""
    proc = SHELL.proc if SHELL is not None else None
    if proc is None or proc.poll() is not None:
        return None
    st = _proc_stat(proc.pid)
    return st[2] if st is not None else None


def _kill_until_gone(select, rounds=20):
    """SIGKILL the live processes ``select(pid, (ppid, pgrp, session))`` picks (never ourselves),
    again and again while new ones appear (a fork bomb forks while we kill). Returns how many
    processes it killed."""
    me = os.getpid()
    killed = set()
    for _ in range(rounds):
        victims = [pid for pid in _pids() if pid != me and (st := _proc_stat(pid)) is not None and select(pid, st)]
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.02)
        reap()
    return len(killed)


class Shell:
    """The agent's persistent bash session."""

    def __init__(self, workdir, env, rlimits, pids=None):
        self.workdir, self.env, self.rlimits = workdir, env, rlimits
        self.pids = pids or {}  # {"limit": tasks of this namespace that fit, "name": "pids 128"}
        self.proc = None
        self.bg_pgids = set()  # background jobs alive after the previous command (spared by a kill)
        self.carry = (b"", b"")  # output of background jobs that arrived after the previous command ended
        self.start()

    def _preexec(self):
        import resource
        try:  # out of memory, the kernel kills the agent's commands before sandboxd (0): never the other way
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")
        except OSError:
            pass
        for name, value in self.rlimits.items():
            res = getattr(resource, name)
            try:
                resource.setrlimit(res, (value, value))
            except (ValueError, OSError):
                pass

    def start(self):
        cwd = self.workdir if os.path.isdir(self.workdir) else "/"
        self.proc = subprocess.Popen(["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd, env=self.env, start_new_session=True,
                                     preexec_fn=self._preexec, bufsize=0)
        for f in (self.proc.stdout, self.proc.stderr):
            os.set_blocking(f.fileno(), False)
        # Job control: every foreground pipeline and background job gets its own process group.
        # Commands run inside __lis_run (in this shell: state persists); SIGINT makes the trap
        # `return` from it, which abandons the rest of the command like Ctrl-C in a terminal.
        self.proc.stdin.write(b"set -m; PS1=; PS2=; unset HISTFILE\n"
                              b"__lis_run() { eval \"$__lis_cmd\"; }\n"
                              b"trap 'return 130 2>/dev/null' INT\n")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill_commands(self, spare_pgids):
        """SIGKILL every process of the shell's session except the shell and spared background jobs."""
        sid = self.proc.pid
        _kill_until_gone(lambda pid, st: st[2] == sid and pid != sid and st[1] not in spare_pgids)

    def kill_all(self):
        """The shell and everything it started, except ourselves. Only as PID 1 of a sandbox's own PID
        namespace does that mean every other process (escapees from the session included); anywhere
        else it means the shell's session only. Returns how many processes it killed."""
        sid = self.proc.pid if self.proc is not None else None
        killed = _kill_until_gone(lambda pid, st: os.getpid() == 1 or st[2] == sid)
        if self.proc is not None:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        return killed

    def restart(self):
        killed = self.kill_all()
        self.bg_pgids = set()
        self.carry = (b"", b"")
        self.start()
        return killed

    def exhausted(self):
        """The process limit is (all but) used up: a command could not start its processes. Counted,
        not guessed from a command's output (which may say anything). A fork bomb at the limit dips
        below it now and then (a wave of bash's fork retries gives up), so a sandbox over half full is
        watched for up to PIDS_LOOK_S before it is declared fine."""
        limit = self.pids.get("limit")
        if not limit or os.getpid() != 1:
            return False  # only as PID 1 of the sandbox do we see (and may kill) every process
        ends = time.monotonic() + PIDS_LOOK_S
        while True:
            n = _tasks()
            if n >= limit - PIDS_SLACK:
                return True
            if n < limit // 2 or time.monotonic() >= ends:
                return False
            time.sleep(0.01)

    def run(self, command, timeout, max_output):
        """Run one command in the session; return (response header, (stdout, stderr)).

        The shell evals the command (its state persists) with stdin from /dev/null; an epilogue of
        builtins (no fork) prints the exit code, the background jobs and end markers carrying a
        per-command nonce. On timeout or past ``max_output`` bytes the command's processes are
        killed; a shell that does not come back within GRACE_S (or died) is restarted.

        An exhausted process limit (counted before the command) is reclaimed first: every other
        process killed, the shell restarted; one exhausted during a command that then fails is
        reclaimed after it. ``reclaimed``/``reclaim_note`` say what was killed and why.
        """
        restarted = False
        reclaimed, note = 0, None
        if self.exhausted():  # the command could not start: reclaim the sandbox first
            reclaimed = self.restart()
            restarted = True
            note = (f"[sandbox] the process limit ({self.pids['name']}) was exhausted: killed {reclaimed} processes "
                    f"left running by earlier commands, restarted the shell, then ran this command")
        elif not self.alive():
            self.restart()
            restarted = True
        nonce = secrets.token_hex(8)
        mark_out = f"\n__LIS_{nonce}__ ".encode()
        end_out = f"__LIS_{nonce}_END__\n".encode()
        end_err = f"\n__LIS_{nonce}__\n".encode()
        quoted = command.replace("\0", "").replace("\\", "\\\\").replace("'", "\\'")
        script = (f"__lis_cmd=$'{quoted}'\n__lis_run </dev/null\n__lis_ec=$?; unset __lis_cmd; "
                  f"printf '\\n__LIS_{nonce}__ %s\\n' \"$__lis_ec\"; "
                  f"jobs -p; printf '__LIS_{nonce}_END__\\n'; printf '\\n__LIS_{nonce}__\\n' >&2\n").encode()
        streams = {self.proc.stdout.fileno(): _Stream(end_out, max_output, self.carry[0]),
                   self.proc.stderr.fileno(): _Stream(end_err, max_output, self.carry[1])}
        t0 = time.monotonic()
        deadline = t0 + timeout
        reason = None
        killed_at = None
        last_int = 0.0
        closed = set()
        try:
            self.proc.stdin.write(script)
        except OSError:
            pass
        while not all(st.done for st in streams.values()):
            now = time.monotonic()
            if reason is None and now >= deadline:
                reason = "timeout"
            if reason is not None and (killed_at is None or now - last_int > 0.1):
                try:  # first mark the shell interrupted (the trap returns from __lis_run) ...
                    os.kill(self.proc.pid, signal.SIGINT)
                except OSError:
                    pass
                time.sleep(0.005)
                self.kill_commands(self.bg_pgids)  # ... then kill what runs (again for what starts later)
                last_int = time.monotonic()
                if killed_at is None:
                    killed_at = last_int
            if killed_at is not None and time.monotonic() - killed_at > GRACE_S:
                break  # the shell itself is stuck (a busy builtin loop): restart it below
            wait = 0.05 if killed_at is not None else max(0.0, min(deadline - now, 0.1))
            open_fds = [fd for fd, st in streams.items() if not st.done and fd not in closed]
            try:
                ready, _, _ = select.select(open_fds, [], [], wait) if open_fds else ([], [], time.sleep(wait))
            except InterruptedError:
                ready = []
            for fd in ready:
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    continue
                if chunk:
                    streams[fd].feed(chunk)
                else:
                    closed.add(fd)  # EOF: the shell is gone (its background jobs may keep other ends open)
            if reason is None and sum(st.size for st in streams.values()) > max_output:
                reason = "output_limit"
            if (closed or not ready) and not self.alive():
                break  # the shell exited (`exit`, `kill -9 -1`)
            reap()
        out, err = streams[self.proc.stdout.fileno()], streams[self.proc.stderr.fileno()]
        exit_code = None
        # The limit ran out while the command ran (bash gave up retrying a fork, or it timed out):
        # reclaim now, and say so (counted, not read from the output: a command may print anything).
        exhausted_during = note is None and (reason is not None or not (out.done and err.done)) and self.exhausted()
        if out.done and err.done:
            body = out.body()
            i = body.rindex(mark_out)
            tail = body[i + len(mark_out):].split(b"\n")
            exit_code = int(tail[0])
            self.bg_pgids = {int(x) for x in tail[1:] if x.strip().isdigit()}
            stdout, stderr = body[:i], err.body()
            self.carry = (out.extra, err.extra)  # late output of background jobs: shown with the next command
            if exhausted_during:
                reclaimed = self.restart()
                restarted = True
        else:
            died = not self.alive()
            if died:
                exit_code = self.proc.returncode
            stdout, stderr = out.body(), err.body()
            killed = self.restart()
            restarted = True
            if exhausted_during:
                reclaimed = killed
            if reason is None:
                reason = "shell_exited" if died else "stuck"
        if exhausted_during:
            note = (f"[sandbox] the process limit ({self.pids['name']}) was exhausted while this command ran, so it "
                    f"may not have run completely: killed {reclaimed} processes, restarted the shell; run it again")
        return {"ok": True, "exit_code": exit_code, "timed_out": reason == "timeout",
                "output_limited": reason == "output_limit", "shell_restarted": restarted, "reason": reason,
                "duration_s": time.monotonic() - t0, "stdout_dropped": out.dropped, "stderr_dropped": err.dropped,
                "reclaimed": reclaimed, "reclaim_note": note}, (stdout, stderr)


class _Stream:
    """One output stream of a command: its first ``cap`` bytes and a rolling tail (what is in
    between is dropped and counted), scanned for the end marker in the newest bytes only."""

    TAIL = 1 << 16

    def __init__(self, end, cap, carry=b""):
        self.end, self.cap = end, cap
        self.buf = bytearray(carry)
        self.size = len(carry)
        self.dropped = 0
        self.done = False
        self.extra = b""

    def feed(self, chunk):
        self.size += len(chunk)
        start = max(0, len(self.buf) - len(self.end))
        self.buf += chunk
        j = self.buf.find(self.end, start)
        if j >= 0:
            self.done = True
            self.extra = bytes(self.buf[j + len(self.end):])
            del self.buf[j:]
        excess = len(self.buf) - (self.cap + self.TAIL)
        if excess > 0:
            del self.buf[self.cap:self.cap + excess]
            self.dropped += excess

    def body(self):
        return bytes(self.buf)


def reap():
    """As PID 1, collect orphans (never our own Popen child, which Popen waits for)."""
    while True:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if info is None:
            return
        if SHELL is not None and SHELL.proc is not None and info.si_pid == SHELL.proc.pid:
            return
        try:
            os.waitpid(info.si_pid, os.WNOHANG)
        except ChildProcessError:
            return


def _err(e):
    return {"ok": False, "error": f"{type(e).__name__}: {e}", "errno": getattr(e, "errno", None)}


def op_write(h, payload):
    path = h["path"]
    if h.get("mkdirs", True):
        os.makedirs(os.path.dirname(path) or "/", exist_ok=True)
    with open(path, "wb") as f:
        f.write(payload)
    if h.get("mode") is not None:
        os.chmod(path, h["mode"])
    return {"ok": True, "bytes": len(payload)}, ()


def op_read(h, _):
    path, limit = h["path"], h.get("max_bytes")
    size = os.stat(path).st_size
    if os.path.isdir(path):
        raise IsADirectoryError(21, "is a directory", path)
    if limit is not None and size > limit:
        return {"ok": False, "error": f"file is {size} bytes, over the {limit}-byte limit", "errno": 27}, ()
    with open(path, "rb") as f:
        data = f.read(limit + 1 if limit is not None else -1)
    return {"ok": True, "bytes": len(data)}, (data,)


def op_put_tar(h, payload):
    dest = h["dest"]
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r:") as tf:
        # the archive comes from the host; the filter exists from Python 3.11.4 (Debian 12 has 3.11.2)
        tf.extractall(dest, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return {"ok": True}, ()


def op_walk(h, _):
    """The entries of the file or folder ``src`` (itself first, then depth-first in name order), one
    JSON line each: ``{"p": path relative to src's parent, "t": "f" | "d" | "l" | "o", "s": size,
    "m": mode, "l": link target}``; links are never followed; past ``max_entries`` only counted."""
    src = h["src"].rstrip("/") or "/"
    limit = int(h.get("max_entries") or WALK_MAX_ENTRIES)
    os.lstat(src)  # FileNotFoundError, PermissionError
    base = os.path.dirname(src)
    lines, more = [], 0

    def entry(path):
        st = os.lstat(path)
        rel = os.path.relpath(path, base) if base else path.lstrip("/")
        e = {"p": rel, "m": st.st_mode & 0o7777, "s": 0}
        if os.path.islink(path):
            e["t"], e["l"] = "l", os.readlink(path)
        elif os.path.isdir(path):
            e["t"] = "d"
        elif os.path.isfile(path):
            e["t"], e["s"] = "f", st.st_size
        else:
            e["t"] = "o"  # fifo, socket, device: never copied
        return e

    def add(path):
        nonlocal more
        if len(lines) >= limit:
            more += 1
            return
        try:
            lines.append(json.dumps(entry(path)))
        except OSError:
            pass

    add(src)
    if os.path.isdir(src) and not os.path.islink(src):
        for root, dirs, files in os.walk(src, onerror=lambda e: None):
            dirs.sort()
            for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
                add(os.path.join(root, name))
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
            for d in dirs:
                add(os.path.join(root, d))
    return {"ok": True, "entries": len(lines), "more": more}, ("\n".join(lines).encode(),)


def op_read_range(h, _):
    """Up to ``length`` bytes (at most READ_RANGE_MAX) of the regular file ``path`` from ``offset``;
    links are not followed."""
    path = h["path"]
    length = min(int(h.get("length", READ_RANGE_MAX)), READ_RANGE_MAX)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(22, "not a regular file", path)
        data = os.pread(fd, length, int(h.get("offset", 0)))
    finally:
        os.close(fd)
    return {"ok": True, "bytes": len(data)}, (data,)


def _own_limit(name):
    try:
        return resource.getrlimit(getattr(resource, name))
    except (AttributeError, ValueError, OSError):
        return None


def _wait(proc, timeout):
    """The exit status of ``proc`` within ``timeout`` seconds, or None."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


class Runner:
    """``run``: one fresh process per request, independent of the agent's shell (Inspect's
    ``exec(argv)``), in its own session, with the shell's resource limits and ``oom_score_adj``; on
    timeout or past ``max_output`` bytes of one stream every process of its session is killed. Exit
    128+n for a death by signal n; a missing program is exit 127 (``missing``), as a shell says."""

    def __init__(self, workdir, env, preexec, rlimits):
        self.workdir, self.env = workdir, env
        # a preexec_fn forces a slow fork: where our own limits already are the command's (inherited),
        # the child is spawned without one and only its oom_score_adj is set
        self.preexec = None if all(_own_limit(name) == (v, v) for name, v in rlimits.items()) else preexec

    def run(self, h, stdin):
        argv = [str(a) for a in h["argv"]]
        cwd = h.get("cwd") or self.workdir
        if not os.path.isabs(cwd):
            cwd = os.path.join(self.workdir, cwd)
        env = {**self.env, **{str(k): str(v) for k, v in (h.get("env") or {}).items()}}
        timeout = h.get("timeout")
        max_output = int(h.get("max_output") or (10 << 20))
        t0 = time.monotonic()
        before = set(_pids())  # what ran before this call: never this call's to kill
        if not os.path.isdir(cwd):
            return {"ok": True, "exit_code": 1, "timed_out": False, "output_limited": False,
                    "duration_s": 0.0}, (b"", f"cannot change to directory {cwd}: No such directory\n".encode())
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
                                    start_new_session=True, preexec_fn=self.preexec, bufsize=0)
        except FileNotFoundError:
            return {"ok": True, "exit_code": 127, "missing": True, "timed_out": False, "output_limited": False,
                    "duration_s": time.monotonic() - t0}, (b"", f"{argv[0]}: command not found\n".encode())
        except PermissionError as e:
            return {"ok": False, "errno": 13, "error": f"PermissionError: {e}"}, ()
        except OSError as e:  # ENOEXEC (not a program), E2BIG (arguments too long), ...
            return {"ok": False, "errno": e.errno, "error": f"{type(e).__name__}: {e}"}, ()
        if self.preexec is None:
            try:  # out of memory, the kernel kills commands before sandboxd (as Shell._preexec does)
                with open(f"/proc/{proc.pid}/oom_score_adj", "w") as f:
                    f.write("1000")
            except OSError:
                pass
        out, err = bytearray(), bytearray()
        streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
        for fd in streams:
            os.set_blocking(fd, False)
        pending = memoryview(stdin) if stdin is not None else None
        win = proc.stdin.fileno() if stdin is not None else None
        if win is not None:
            os.set_blocking(win, False)
            if not pending:
                proc.stdin.close()
                win = None
        deadline = None if timeout is None else t0 + float(timeout)
        timed_out = limited = False
        exited_at = None
        try:  # readable when the process ends: no polling for its exit
            pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            pidfd = None
        try:
            while True:
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    timed_out = True
                    break
                if exited_at is None and proc.poll() is not None:
                    exited_at = now
                if exited_at is not None and (not streams or now - exited_at > 0.05):
                    break  # a background process holding the pipes past 50 ms: its output is not ours to wait for
                wait = 0.05 if exited_at is not None else 0.1 if pidfd is not None or streams else 0.005
                if deadline is not None:
                    wait = max(0.0, min(deadline - now, wait))
                rlist = list(streams) + ([pidfd] if pidfd is not None and exited_at is None else [])
                try:
                    r, w, _ = select.select(rlist, [win] if win is not None else [], [], wait)
                except InterruptedError:
                    continue
                if w:
                    try:
                        n = os.write(win, pending[:1 << 16])
                        pending = pending[n:]
                    except BlockingIOError:
                        pass
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        proc.stdin.close()
                        win = None
                for fd in r:
                    if fd == pidfd:
                        continue  # the next round's poll() collects the exit status
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        del streams[fd]
                        continue
                    streams[fd] += chunk
                if len(out) > max_output or len(err) > max_output:
                    limited = True
                    break
        finally:
            if pidfd is not None:
                os.close(pidfd)
        if timed_out or limited:  # its session, and what it started that left the session (setsid, nohup)
            sid = proc.pid
            shell = _shell_session()
            _kill_until_gone(lambda pid, st: st[2] == sid or (pid not in before and st[2] != shell))
        code = proc.returncode if proc.returncode is not None else _wait(proc, 5)
        for f in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        if code is not None and code < 0:
            code = 128 - code  # killed by signal n: exit 128+n, as a shell reports it
        return {"ok": True, "exit_code": code, "timed_out": timed_out, "output_limited": limited,
                "duration_s": time.monotonic() - t0}, (bytes(out[:max_output + 1]), bytes(err[:max_output + 1]))


SHELL = None
RUNNER = None


def main():
    global SHELL, RUNNER
    _non_dumpable()
    # A signal mask and ignored signals are inherited through exec: a bubblewrap sandbox started by a
    # host that blocks or ignores SIGINT (a script's `cmd &`) would give the shell a SIGINT it cannot
    # trap, and a timeout could no longer abandon the rest of a command. So everything starts as a fresh
    # Python would. No handler of our own either: the kernel does not deliver to a namespace's init a
    # signal left at its default (unless SIGKILL/SIGSTOP from outside), so the agent cannot end the
    # sandbox with `kill -TERM 1`; the host ends it with SIGKILL (container removal, bwrap's parent dying).
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    chan = Channel()
    hello, _ = chan.recv(None)
    cfg = hello.get("config", {})
    env = {k: v for k, v in os.environ.items() if k in SHELL_ENV_KEEP}
    env.update(cfg.get("env", {}))
    lifetime = float(cfg.get("lifetime_s", 86400))
    memory_mb = cfg.get("memory_mb")
    SHELL = Shell(cfg.get("workdir", "/testbed"), env, cfg.get("rlimits", {}), cfg.get("pids"))
    rlimits = cfg.get("rlimits", {})
    for name in ("RLIMIT_NOFILE", "RLIMIT_CORE"):  # ours too (harmless): Runner then spawns without a preexec_fn
        if name in rlimits:
            try:
                resource.setrlimit(getattr(resource, name), (rlimits[name], rlimits[name]))
            except (ValueError, OSError):
                pass
    RUNNER = Runner(cfg.get("workdir", "/testbed"), env, SHELL._preexec, rlimits)
    chan.send({"ok": True, "op": "hello", "pid": os.getpid(), "uid": os.getuid(), "shell_pid": SHELL.proc.pid,
               "python": sys.version.split()[0], "id": hello.get("id")})
    ends = time.monotonic() + lifetime
    while time.monotonic() < ends:
        try:
            msg = chan.recv(min(1.0, max(0.0, ends - time.monotonic())))
        except EOFError:
            break
        reap()
        if msg is None:
            continue
        h, payloads = msg
        op = h.get("op")
        try:
            if op == "exec":
                before = oom_kills()
                resp, data = SHELL.run(h["cmd"], float(h.get("timeout", 120)), int(h.get("max_output", 1 << 24)))
                after = oom_kills()
                if before is not None and after is not None and after > before:
                    resp["oom_killed"] = after - before
                    resp["reclaim_note"] = "\n".join(filter(None, (resp.get("reclaim_note"),
                                                                     oom_note(after - before, memory_mb))))
            elif op == "run":
                resp, data = RUNNER.run(h, payloads[0] if h.get("stdin") else None)
            elif op == "write":
                resp, data = op_write(h, payloads[0] if payloads else b"")
            elif op == "read":
                resp, data = op_read(h, None)
            elif op == "put_tar":
                resp, data = op_put_tar(h, payloads[0])
            elif op == "walk":
                resp, data = op_walk(h, None)
            elif op == "read_range":
                resp, data = op_read_range(h, None)
            elif op == "restart":
                SHELL.restart()
                resp, data = {"ok": True}, ()
            elif op == "ping":
                resp, data = {"ok": True, "shell_alive": SHELL.alive()}, ()
            else:
                resp, data = {"ok": False, "error": f"unknown op {op!r}"}, ()
        except Exception as e:  # a failed op is an answer, never the end of the sandbox
            resp, data = _err(e), ()
        resp["id"] = h.get("id")
        resp["op"] = op
        chan.send(resp, *data)
    SHELL.kill_all()


if __name__ == "__main__":
    main()

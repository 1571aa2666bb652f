"""Docker backend: one container per sandbox, ``sandboxd`` as its PID 1 over the attach socket.

The container is hardened: non-root user, no capabilities, no new privileges, lis's seccomp filter,
read-only root filesystem, size-capped tmpfs for /testbed, /tmp, /var/tmp and the home folder (tmpfs
pages count against the memory limit), memory without swap, CPU and pids limits, network ``none``
unless params say ``bridge``, never the Docker socket, log driver ``none``. It is labelled
``lis.managed=true`` plus run id, owner and expiry, removes itself when it stops (``auto_remove``),
and stops when its lifetime ends or our connection closes (``stdin_once``), so even a SIGKILLed runner
leaves nothing running for long.
"""
from __future__ import annotations

import select
import socket
import struct
import threading
import time
import uuid

from lis.sandbox.base import BOOT, Sandbox, SandboxError, _Channel
from lis.sandbox.engine import connect
from lis.sandbox.labels import sandbox_labels
from lis.sandbox.seccomp import docker_profile


CREATE_RACE_S = 5.0  # how long a start cut by a signal during its create call looks for the container made
# How long closing a sandbox waits for its create call in another thread to return: a created, never-started
# container never removes itself, so it must be removed before this process ends
CREATE_WAIT_S = 30.0


class _AttachChannel(_Channel):
    """Docker's multiplexed attach stream: 8-byte frame headers, stream 1 = stdout, 2 = stderr."""

    def __init__(self, sock, on_stderr):
        self._wrapper = sock
        self._sock = getattr(sock, "_sock", sock)
        self._sock.setblocking(True)
        self._raw = bytearray()
        self._on_stderr = on_stderr
        self._eof = False

    def send(self, data: bytes) -> None:
        self._sock.sendall(data)

    def recv(self, timeout: float) -> bytes:
        out = bytearray()
        end = time.monotonic() + timeout
        while not out:
            if self._eof:
                raise EOFError("the sandbox closed its output")
            left = end - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([self._sock], [], [], left)
            if not r:
                break
            chunk = self._sock.recv(1 << 20)
            if not chunk:
                self._eof = True
                continue
            self._raw += chunk
            pos, raw = 0, self._raw
            while len(raw) - pos >= 8:
                stream, size = raw[pos], struct.unpack_from(">I", raw, pos + 4)[0]
                if len(raw) - pos < 8 + size:
                    break
                data = raw[pos + 8:pos + 8 + size]
                pos += 8 + size
                if stream == 2:
                    self._on_stderr(bytes(data))
                else:
                    out += data
            del raw[:pos]  # once per read, not once per frame
        return bytes(out)

    def close(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self._wrapper.close()
        except Exception:
            pass


class DockerSandbox(Sandbox):
    def __init__(self, config):
        super().__init__(config)
        self.container = None
        self._client = None
        self._created_at = 0.0
        self._creating = False
        self._made = False
        self._creator = 0  # the thread whose create call is in flight
        self._create_returned = threading.Event()

    def _on_stderr(self, data: bytes) -> None:
        self._note_stderr(data.decode("utf-8", "replace"))

    def _start(self) -> _Channel:
        import docker.errors
        import docker.types

        c = self.config
        lim = c.limits
        if c.network not in ("none", "bridge"):
            raise SandboxError(f"unknown network policy '{c.network}'", "use none or bridge")
        self._client = connect(c.engine)
        name = f"lis-{c.run_id}-{uuid.uuid4().hex[:8]}"
        self.id = name
        self._created_at = time.time()
        tmpfs_opts = f"uid={c.uid},gid={c.uid}"
        api = self._client.api
        try:
            host_config = api.create_host_config(
                network_mode=c.network, read_only=True,
                tmpfs={c.workdir: f"size={lim.testbed_mb}m,{tmpfs_opts},mode=0755",
                       "/tmp": f"size={lim.tmp_mb}m,mode=1777",
                       "/var/tmp": f"size={lim.var_tmp_mb}m,mode=1777",
                       c.home: f"size={lim.home_mb}m,{tmpfs_opts},mode=0755"},
                mem_limit=f"{lim.memory_mb}m", memswap_limit=f"{lim.memory_mb}m",
                nano_cpus=int(lim.cpus * 1e9), pids_limit=lim.pids,
                cap_drop=["ALL"], security_opt=["no-new-privileges", f"seccomp={docker_profile()}"], init=False,
                ulimits=[docker.types.Ulimit(name="nofile", soft=lim.nofile, hard=lim.nofile),
                         docker.types.Ulimit(name="core", soft=0, hard=0)],
                log_config=docker.types.LogConfig(type="none"), auto_remove=True)
            self._creating, self._creator = True, threading.get_ident()
            try:
                created = api.create_container(
                    c.image, ["python3", "-c", BOOT], name=name, hostname="sandbox", user=f"{c.uid}:{c.uid}",
                    working_dir=c.workdir, environment={"HOME": c.home}, labels=sandbox_labels(c, backend="docker"),
                    stdin_open=True, detach=False, tty=False, host_config=host_config)  # => StdinOnce: stop when we hang up
            except BaseException as e:
                # unless the engine answered (an API error), a signal may have cut our wait after the request
                # reached it: a created, never-started container would stay for good
                self._remove_by_name(name, wait_s=0.0 if isinstance(e, docker.errors.APIError) else CREATE_RACE_S)
                raise
            else:
                self._made = True  # the engine made it: from here _destroy removes it, by name if need be
            finally:
                self._creating = False
                self._create_returned.set()
            if self._closed:  # closed while the engine created it (a signal's close_all, from another thread)
                self._remove_by_name(name, wait_s=0.0)
                raise SandboxError(f"sandbox {name} was closed while it started")
            self.container = self._client.containers.get(created["Id"])
        except SandboxError:
            raise
        except Exception as e:
            raise SandboxError(f"cannot create a sandbox from image {c.image} ({' '.join(str(e).split())[:200]})",
                               "build it with `lis image build` and check `lis doctor`") from None
        sock = self._client.api.attach_socket(self.container.id, params={"stdin": 1, "stdout": 1, "stderr": 1,
                                                                          "stream": 1})
        chan = _AttachChannel(sock, self._on_stderr)
        try:
            self.container.start()
        except Exception as e:
            chan.close()
            raise SandboxError(f"cannot start sandbox {name} ({' '.join(str(e).split())[:200]})") from None
        return chan

    def _died_of_oom(self) -> bool:
        """Docker reported an ``oom`` event for this container (the event outlives the auto-removed container)."""
        if self.container is None or self._client is None:
            return False
        for wait in (0.0, 0.3, 0.6):  # the engine may record the event a moment after the connection drops
            time.sleep(wait)
            events = self._client.api.events(since=int(self._created_at) - 1, until=f"{time.time():.3f}", decode=True,
                                             filters={"container": self.container.id, "event": "oom"})
            try:
                if any(True for _ in events):
                    return True
            finally:
                events.close()
        return False

    def _destroy(self) -> None:
        if self.container is None:
            if self._creating and self._creator != threading.get_ident():
                # its create call is in flight in another thread (a signal's close_all, atexit): wait for the
                # engine's answer, or this process may end (its daemon threads with it) before the container exists
                self._create_returned.wait(CREATE_WAIT_S)
            # by name; a signal on top of the create call itself: _start looks again once it unwinds
            if (self._creating or self._made) and self.id:
                self._remove_by_name(self.id, wait_s=0.0)
            return
        try:
            self.container.remove(force=True)
        except Exception:
            pass  # already gone (auto_remove) or the engine is down: `lis sandbox cleanup` sweeps by label

    def _remove_by_name(self, name: str, wait_s: float) -> None:
        """Remove the container ``name`` if it exists; while it does not, look again for ``wait_s`` seconds
        (a create request the engine has not finished). Never raises."""
        import docker.errors

        if self._client is None:
            return
        until = time.monotonic() + wait_s
        while True:
            try:
                self._client.api.remove_container(name, force=True)
                return
            except docker.errors.NotFound:
                if time.monotonic() >= until:
                    return
            except Exception:  # noqa: BLE001 - the engine is down: `lis sandbox cleanup` sweeps by label
                return
            time.sleep(0.05)

    def raw_exec(self, argv: list[str]):
        """A plain ``docker exec`` in this sandbox (the official runtime's way; benchmarks compare)."""
        return self.container.exec_run(argv, user=str(self.config.uid), workdir=self.config.workdir)

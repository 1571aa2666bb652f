"""A pool of sandboxes: bounded concurrency, warm sandboxes ready to hand out, several engines.

    pool = SandboxPool(config, max_concurrent=8, warm=2, engines=["unix:///var/run/docker.sock", "tcp://gpu2:2375"])
    with pool.sandbox() as sb:      # blocks while max_concurrent sandboxes are out
        sb.exec("ls")
    pool.close()

Every episode gets a fresh computer: a released sandbox is destroyed, never reused. Warm sandboxes
start in the background; new ones go to the engine with the fewest live sandboxes.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import queue
import threading
import time
from typing import Iterator

from lis.sandbox.base import Sandbox, SandboxConfig, SandboxError
from lis.sandbox.cleanup import cleanup
from lis.sandbox.factory import make_sandbox
from lis.util import cancel

log = logging.getLogger(__name__)


def _local_docker() -> bool:
    """A Docker engine on this machine's default socket (checked without waiting on a remote one)."""
    import os

    return not os.environ.get("DOCKER_HOST") and os.path.exists("/var/run/docker.sock")


class PoolTimeout(SandboxError):
    """``acquire`` waited its whole timeout: every slot of the pool stayed out."""


class SandboxPool:
    def __init__(self, config: SandboxConfig, max_concurrent: int = 8, warm: int = 0,
                 engines: list[str] | None = None):
        if max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")
        self.config = config
        self.max_concurrent = max_concurrent
        self.warm = max(0, warm)
        self.engines: list[str | None] = list(engines) if engines else [config.engine]
        self._slots = threading.BoundedSemaphore(max_concurrent)
        self._ready: "queue.Queue[Sandbox]" = queue.Queue()
        self._lock = threading.Lock()
        self._load = {e: 0 for e in self.engines}  # live sandboxes per engine
        self._engine_of: dict[int, str | None] = {}
        self._closed = False
        self._filling = 0
        self.started = 0
        if config.backend == "docker":
            self._sweep_orphans(self.engines)
        elif _local_docker():  # what a SIGKILLed docker run left here (a created, never-started container)
            self._sweep_orphans([None])
        if self.warm:
            self._refill()

    def _sweep_orphans(self, engines: list[str | None]) -> None:
        """Remove sandboxes whose owner process is gone from this host, or that expired (a SIGKILLed run's)."""
        try:
            removed = cleanup(engines=engines)
        except Exception as e:  # noqa: BLE001 - an unreachable engine fails loudly at the first start
            log.debug("orphan sweep skipped: %s", e)
            return
        if removed:
            log.warning("removed %d sandbox(es) left by processes that are gone: %s", len(removed),
                        ", ".join(removed[:5]) + (" ..." if len(removed) > 5 else ""))

    def _new(self) -> Sandbox:
        with self._lock:
            engine = min(self.engines, key=lambda e: self._load[e])
            self._load[engine] += 1
        try:
            sb = make_sandbox(dataclasses.replace(self.config, engine=engine)).start()
        except BaseException:
            with self._lock:
                self._load[engine] -= 1
            raise
        with self._lock:
            self._engine_of[id(sb)] = engine
            self.started += 1
        return sb

    def _fill_one(self) -> None:
        try:
            if cancel.requested():
                return
            sb = self._new()
            if self._closed:
                self._forget(sb)
            else:
                self._ready.put(sb)
        except Exception as e:
            log.warning("warm sandbox failed to start: %s", e)
        finally:
            with self._lock:
                self._filling -= 1

    def _refill(self) -> None:
        with self._lock:
            need = self.warm - self._ready.qsize() - self._filling
            if self._closed or need <= 0:
                return
            self._filling += need
        for _ in range(need):
            threading.Thread(target=self._fill_one, daemon=True).start()

    @property
    def ready(self) -> int:
        """Warm sandboxes started and waiting to be handed out."""
        return self._ready.qsize()

    def wait_ready(self, n: int, timeout_s: float) -> int:
        """Wait until ``n`` warm sandboxes are started (or ``timeout_s`` passed); returns how many are."""
        deadline = time.monotonic() + timeout_s
        while self.ready < n and time.monotonic() < deadline:
            cancel.check()
            time.sleep(0.1)
        return self.ready

    def acquire(self, timeout: float | None = None) -> Sandbox:
        """A started sandbox (warm when one is ready). Blocks while max_concurrent are out: at most
        ``timeout`` seconds (None: no limit), then raises PoolTimeout."""
        if self._closed:
            raise SandboxError("the sandbox pool is closed")
        cancel.check()
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._slots.acquire(timeout=0.2):  # wake up now and then: after Ctrl-C nothing new starts
            cancel.check()
            if self._closed:  # closed while this caller waited (its run is ending): no sandbox for it
                raise SandboxError("the sandbox pool was closed while waiting for a sandbox")
            if deadline is not None and time.monotonic() >= deadline:
                raise PoolTimeout(f"no sandbox free within {timeout}s (max_concurrent={self.max_concurrent})")
        try:
            cancel.check()
            while True:
                try:
                    sb = self._ready.get_nowait()
                except queue.Empty:
                    sb = self._new()
                    break
                if sb.ping():
                    break
                self._forget(sb)  # a warm one that died while waiting
        except BaseException:
            self._slots.release()
            raise
        self._refill()
        return sb

    def _forget(self, sb: Sandbox) -> None:
        sb.close()
        with self._lock:
            engine = self._engine_of.pop(id(sb), None)
            if engine in self._load:
                self._load[engine] -= 1

    def release(self, sb: Sandbox) -> None:
        """Destroy a sandbox handed out by ``acquire`` and free its slot."""
        try:
            self._forget(sb)
        finally:
            self._slots.release()

    @contextlib.contextmanager
    def sandbox(self, timeout: float | None = None) -> Iterator[Sandbox]:
        sb = self.acquire(timeout)
        try:
            yield sb
        finally:
            self.release(sb)

    def close(self) -> None:
        """Destroy the warm sandboxes (sandboxes still out are destroyed by their release)."""
        self._closed = True
        deadline = time.monotonic() + 30
        while True:
            with self._lock:
                filling = self._filling
            while True:
                try:
                    self._forget(self._ready.get_nowait())
                except queue.Empty:
                    break
            if not filling or time.monotonic() > deadline:
                break
            time.sleep(0.05)

    def __enter__(self) -> "SandboxPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

"""What one server run holds: settings, the upstream model, the pool, admission, running episodes,
counters, and the shutdown sequence (cancel every episode, kill its sandbox, sweep this run's label)."""
from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from lis.agent.loop import AgentConfig
from lis.models.base import ChatModel
from lis.sandbox import registry
from lis.sandbox.base import SandboxConfig
from lis.sandbox.pool import SandboxPool
from lis.serve.admission import Admission
from lis.serve.episodes import Episode, EpisodeRunner
from lis.serve.files import FileStore
from lis.config.serving import ServeSection
from lis.serve.sweep import sweep_own
from lis.util.stats import percentiles

log = logging.getLogger("lis.serve")


@dataclass
class ServeState:
    settings: ServeSection
    model: ChatModel
    agent: AgentConfig
    sandbox: SandboxConfig
    run_id: str
    engines: list[str | None]
    keys: list[str]
    started: float = field(default_factory=time.time)
    counts: Counter = field(default_factory=Counter)
    starts: deque = field(default_factory=lambda: deque(maxlen=256))  # (sandbox start s, acquire wait s)
    shutting_down: bool = False
    loop: asyncio.AbstractEventLoop | None = None
    pool: SandboxPool | None = None
    admission: Admission | None = None
    runner: EpisodeRunner | None = None
    files: FileStore | None = None

    def start(self) -> None:
        """On the event loop, before the first request."""
        s = self.settings
        self.loop = asyncio.get_running_loop()
        self.files = FileStore(s.files_dir, s.files_ttl_s)
        swept = self.files.sweep()
        if swept:
            log.info("removed %d produced-files folder(s) older than serve.files_ttl_s", swept)
        self.pool = SandboxPool(self.sandbox, max_concurrent=s.max_concurrent, warm=s.warm, engines=self.engines)
        self.admission = Admission(s.max_concurrent, s.max_queue)
        self.runner = EpisodeRunner(self.model, self.agent, self.pool, self.files, self.run_id, self._done)

    def _done(self, ep: Episode) -> None:
        """An episode ended: count it and free its slot (always, whatever its record says)."""
        assert self.admission is not None
        try:
            rec = ep.future.result() if ep.future.done() and not ep.future.cancelled() else None
            self.counts[(rec.termination if rec is not None else "") or "error"] += 1
            self.counts["episodes"] += 1
            if rec is not None and (rec.sandbox_start_s or rec.acquire_wait_s):
                self.starts.append((rec.sandbox_start_s, rec.acquire_wait_s))
        except BaseException as e:  # noqa: BLE001 - the slot is freed below whatever this was
            log.warning("episode %s: its end could not be counted: %s: %s", ep.id, type(e).__name__, e)
        finally:
            self.admission.release()
        if self.files is not None and self.counts["episodes"] % 50 == 0:
            self.files.sweep()

    def health(self) -> dict[str, Any]:
        return {"status": "shutting_down" if self.shutting_down else "ok", "run_id": self.run_id,
                "served_name": self.settings.served_name, "upstream": self.model.name,
                "backend": self.sandbox.backend, "uptime_s": round(time.time() - self.started, 1),
                "running": self.admission.running if self.admission else 0,
                "queued": self.admission.queued if self.admission else 0,
                "max_concurrent": self.settings.max_concurrent, "max_queue": self.settings.max_queue,
                "warm": self.settings.warm, "warm_ready": self.pool.ready if self.pool else 0,
                "counts": dict(self.counts),
                "sandboxes": {"episodes": len(self.starts),  # the last 256 episodes' sandboxes
                              "start_s": percentiles([s for s, _ in self.starts]),
                              "acquire_wait_s": percentiles([w for _, w in self.starts])}}

    def request_shutdown(self) -> None:
        """From a signal handler: begin the shutdown on the event loop."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.begin_shutdown)

    def begin_shutdown(self) -> None:
        """No new episode; every running one is cancelled and its sandbox killed (event loop thread)."""
        if self.shutting_down:
            return
        self.shutting_down = True
        if self.admission is not None:
            self.admission.close()
        n = self.runner.stop_all("the server is shutting down") if self.runner else 0
        log.warning("shutting down: %d running episode(s) cancelled", n)

    async def finish_shutdown(self) -> None:
        """After the last response: wait (up to serve.shutdown_grace_s) for episodes to give their
        sandboxes back, close the pool, close every sandbox of the process, sweep this run's label."""
        self.begin_shutdown()
        deadline = time.monotonic() + self.settings.shutdown_grace_s
        while self.runner is not None and self.runner.running() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        if self.pool is not None:
            await asyncio.to_thread(self.pool.close)
        n = await asyncio.to_thread(registry.close_all)
        if n:
            log.info("closed %d sandbox(es) still open", n)
        if self.sandbox.backend == "docker":
            await asyncio.to_thread(sweep_own, self.engines, self.run_id)
        log.info("server run %s stopped: %s", self.run_id, dict(self.counts))

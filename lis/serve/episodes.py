"""One request, one episode: run in its own (daemon) thread with a sandbox from the pool, and
cancellable on its own — a client that goes away, or the server stopping, ends that episode and
kills its sandbox at once (even in the middle of a command), without touching the others."""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import time
import uuid
from typing import Callable

from lis.agent.episode import acquire_timed, run_task
from lis.agent.loop import AgentConfig
from lis.agent.trajectory import Step, Trajectory
from lis.models.base import ChatModel
from lis.sandbox.base import Sandbox, SandboxError
from lis.sandbox.pool import SandboxPool
from lis.serve.budget import BudgetedModel
from lis.serve.files import FileStore
from lis.serve.request import ChatRequest
from lis.tasks.schema import Task
from lis.util import cancel

log = logging.getLogger("lis.serve")


class Episode:
    """A running episode: ``future`` (on the server's event loop) gets its Trajectory."""

    def __init__(self, req: ChatRequest, loop: asyncio.AbstractEventLoop):
        self.id = uuid.uuid4().hex
        self.req = req
        self.loop = loop
        self.future: asyncio.Future = loop.create_future()
        self.turns = 0
        self.last_tools = ""
        self.stop_reason = ""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.sandbox: Sandbox | None = None
        self.started = time.time()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def stop(self, reason: str) -> None:
        """End this episode: no further model or tool call; its sandbox is killed now."""
        with self._lock:
            if self._stop.is_set():
                return
            self.stop_reason = reason
            self._stop.set()
            sb = self.sandbox
        log.info("episode %s: stopping (%s)", self.id, reason)
        if sb is not None:
            threading.Thread(target=sb.kill, daemon=True, name=f"kill-{self.id[:8]}").start()

    def _hold(self, sb: Sandbox) -> bool:
        """Remember the sandbox; False (and kill it) when the episode was stopped meanwhile."""
        with self._lock:
            self.sandbox = sb
            stopped = self._stop.is_set()
        if stopped:
            sb.kill()
        return not stopped

    def on_step(self, step: Step) -> None:
        self.turns = step.index + 1
        self.last_tools = ", ".join(c.tool or "?" for c in step.calls) or "no tool call"


class EpisodeRunner:
    """Starts episodes; ``on_done`` (called on the event loop) frees the episode's slot."""

    def __init__(self, model: ChatModel, cfg: AgentConfig, pool: SandboxPool, files: FileStore, run_id: str,
                 on_done: Callable[[Episode], None]):
        self.model = model
        self.cfg = cfg
        self.pool = pool
        self.files = files
        self.run_id = run_id
        self.on_done = on_done
        self.live: dict[str, Episode] = {}
        self._lock = threading.Lock()

    def start(self, req: ChatRequest) -> Episode:
        ep = Episode(req, asyncio.get_running_loop())
        with self._lock:
            self.live[ep.id] = ep
        threading.Thread(target=self._run, args=(ep,), daemon=True, name=f"episode-{ep.id[:8]}").start()
        return ep

    def stop_all(self, reason: str) -> int:
        with self._lock:
            eps = list(self.live.values())
        for ep in eps:
            ep.stop(reason)
        return len(eps)

    def running(self) -> int:
        with self._lock:
            return len(self.live)

    def _config(self, req: ChatRequest) -> AgentConfig:
        return dataclasses.replace(self.cfg, max_turns=req.limits.max_turns, episode_timeout_s=req.limits.timeout_s)

    def _run(self, ep: Episode) -> None:
        """The episode thread: whatever happens in it (any exception, not just OSError), the request
        gets an answer and its slot back — ``_finish`` is always scheduled on the event loop."""
        rec: Trajectory | None = None
        error = "the episode ended without a record"
        try:
            rec = self._episode(ep)
        except BaseException as e:  # noqa: BLE001 - a bug here must answer the request, not wedge its slot
            log.exception("episode %s failed", ep.id)
            error = f"{type(e).__name__}: {e}"
        finally:
            if rec is None:
                rec = Trajectory(task_id=f"serve-{ep.id}", model=self.model.name, mode="sandbox",
                                 domain="general", run_id=self.run_id, termination="error", error=error,
                                 episode_id=ep.id)
            try:
                ep.loop.call_soon_threadsafe(self._finish, ep, rec)
            except RuntimeError:  # the event loop is gone (the server stopped)
                pass

    def _episode(self, ep: Episode) -> Trajectory:
        req = ep.req
        task = Task(id=f"serve-{ep.id}", domain="general", problem_statement=req.problem_statement, ground_truth="",
                    input_files=dict(req.files))
        model = BudgetedModel(self.model, req.limits.max_completion_tokens, req.sampling)
        rec: Trajectory | None = None
        sb = None
        t0 = time.monotonic()
        try:
            try:
                sb, waited = acquire_timed(self.pool)
            except SandboxError as e:
                rec = self._failed(task, "sandbox_error", e.one_line())
            if sb is not None and ep._hold(sb):
                rec = run_task(task, model, "sandbox", self._config(req), sandbox=sb,
                               collect_to=self.files.folder(ep.id), on_step=ep.on_step, should_stop=lambda: ep.stopped,
                               run_id=self.run_id, episode_id=ep.id)
                rec.acquire_wait_s = waited
            elif rec is None:
                rec = self._failed(task, "interrupted", f"cancelled: {ep.stop_reason}")
        except cancel.Interrupted:
            rec = self._failed(task, "interrupted", f"cancelled: {ep.stop_reason or 'the server stops'}")
        except Exception as e:  # noqa: BLE001 - a bug here must answer the request, not hang it
            log.exception("episode %s failed", ep.id)
            rec = self._failed(task, "error", f"{type(e).__name__}: {e}")
        finally:
            if sb is not None:
                try:
                    self.pool.release(sb)
                except Exception as e:  # noqa: BLE001
                    log.warning("episode %s: releasing its sandbox failed: %s", ep.id, e)
        assert rec is not None
        rec.episode_id = ep.id
        rec.wall_s = time.monotonic() - t0
        if ep.stopped and rec.termination == "interrupted" and not (rec.error or "").startswith("cancelled"):
            rec.error = f"cancelled: {ep.stop_reason}" + (f" — {rec.error}" if rec.error else "")
        try:
            self.files.save_trajectory(ep.id, rec.to_dict())
        except Exception as e:  # noqa: BLE001 - any failure to save (not only OSError) still answers the request
            log.warning("episode %s: cannot save its trajectory: %s: %s", ep.id, type(e).__name__, e)
        log.info("episode %s: %s after %d turns, %.1fs", ep.id, rec.termination, rec.turns, rec.wall_s)
        return rec

    def _finish(self, ep: Episode, rec: Trajectory) -> None:
        with self._lock:
            self.live.pop(ep.id, None)
        try:
            if not ep.future.done():
                ep.future.set_result(rec)
        finally:
            self.on_done(ep)

    def _failed(self, task: Task, termination: str, error: str) -> Trajectory:
        return Trajectory(task_id=task.id, model=self.model.name, mode="sandbox", domain=task.domain,
                          run_id=self.run_id, termination=termination, error=error)

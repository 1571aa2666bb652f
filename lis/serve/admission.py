"""Bounded concurrency for episodes: ``max_running`` at once, at most ``max_queued`` waiting for a
slot; a request beyond that is turned away at once (429). Lives on the event loop (no locks):
release a slot from a worker thread with ``loop.call_soon_threadsafe(admission.release)``."""
from __future__ import annotations

import asyncio
from collections import deque
from typing import Awaitable, Callable

from lis.serve.errors import ApiError


class ShuttingDown(Exception):
    """The server stops: no new episode starts."""


class Admission:
    def __init__(self, max_running: int, max_queued: int):
        self.max_running = max_running
        self.max_queued = max_queued
        self.running = 0
        self._waiting: deque[asyncio.Future] = deque()
        self.closed = False

    @property
    def queued(self) -> int:
        return sum(1 for f in self._waiting if not f.done())

    async def acquire(self, timeout: float, gone: Callable[[], Awaitable[bool]], poll_s: float = 0.25) -> bool:
        """Take a slot: at once, or after waiting in the queue. Raises ApiError(429) when the queue is
        full or the wait exceeds ``timeout``, ShuttingDown when the server stops; returns False
        (holding no slot) when ``gone()`` says the client left while it waited."""
        if self.closed:
            raise ShuttingDown()
        if self.running < self.max_running and not self.queued:
            self.running += 1
            return True
        if self.queued >= self.max_queued:
            raise ApiError(429, f"the server is at capacity ({self.running} episodes running, {self.queued} "
                                f"waiting; serve.max_concurrent={self.max_running}, serve.max_queue={self.max_queued})"
                                "; retry later", type="rate_limit_error", code="server_busy",
                           headers={"Retry-After": "5"})
        fut = asyncio.get_running_loop().create_future()
        self._waiting.append(fut)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        got = False
        try:
            while True:
                done, _ = await asyncio.wait({fut}, timeout=poll_s)
                if done:
                    fut.result()  # raises ShuttingDown
                    got = True
                    return True
                if await gone():
                    return False
                if loop.time() >= deadline:
                    raise ApiError(429, f"no episode slot became free within serve.queue_timeout_s={timeout:g}s; "
                                        "retry later", type="rate_limit_error", code="queue_timeout",
                                   headers={"Retry-After": "5"})
        finally:
            if not fut.done():
                fut.cancel()
            elif not got and not fut.cancelled() and fut.exception() is None:
                self.release()  # a slot was handed over just as this request gave up: pass it on
            try:
                self._waiting.remove(fut)
            except ValueError:
                pass

    def release(self) -> None:
        """Free a slot; the oldest waiting request gets it."""
        while self._waiting:
            fut = self._waiting.popleft()
            if not fut.done():
                fut.set_result(True)  # the slot passes on: running stays the same
                return
        self.running -= 1

    def close(self) -> None:
        """No new slots; every waiting request gets ShuttingDown."""
        self.closed = True
        while self._waiting:
            fut = self._waiting.popleft()
            if not fut.done():
                fut.set_exception(ShuttingDown())

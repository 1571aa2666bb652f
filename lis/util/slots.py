"""A thread pool that deals its work by rule: item i to slot i mod slots, each slot's in order.

    ex = SlotExecutor(4, enter=lockstep.slot)     # enter(s): a context each slot's thread runs in
    futures = [ex.submit(fn, item) for item in items]
    ex.start()                                    # the slots' lists are fixed from here on
    ...                                           # wait on the futures as with ThreadPoolExecutor
    ex.shutdown(wait=True)

``ThreadPoolExecutor`` gives the next item to whichever thread is free first; here which items run
side by side depends on the submission order alone (the deterministic mode, :mod:`lis.models.lockstep`).
"""
from __future__ import annotations

import contextlib
import threading
from concurrent.futures import Future
from typing import Any, Callable, ContextManager


class SlotExecutor:
    def __init__(self, slots: int, enter: Callable[[int], ContextManager[Any]] | None = None,
                 name: str = "lis-slot"):
        if int(slots) < 1:
            raise ValueError("slots must be at least 1")
        self.slots = int(slots)
        self._enter = enter or (lambda s: contextlib.nullcontext())
        self._work: list[list[tuple[Future, Callable[..., Any], tuple[Any, ...]]]] = [[] for _ in range(self.slots)]
        self._next = 0
        self._threads: list[threading.Thread] = []
        self._name = name

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        if self._threads:
            raise RuntimeError("SlotExecutor: submit before start()")
        f: Future = Future()
        self._work[self._next % self.slots].append((f, fn, args))
        self._next += 1
        return f

    def start(self) -> None:
        for s in range(self.slots):
            t = threading.Thread(target=self._run, args=(s,), name=f"{self._name}-{s}", daemon=True)
            self._threads.append(t)
            t.start()

    def _run(self, s: int) -> None:
        with self._enter(s):
            for f, fn, args in self._work[s]:
                if not f.set_running_or_notify_cancel():
                    continue
                try:
                    f.set_result(fn(*args))
                except BaseException as e:  # noqa: BLE001 - the future carries it
                    f.set_exception(e)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        if cancel_futures:
            for work in self._work:
                for f, _, _ in work:
                    f.cancel()  # only those not started
        if wait:
            for t in self._threads:
                t.join()

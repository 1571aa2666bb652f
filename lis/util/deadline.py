"""The time a blocking call may take, set by whoever waits for it and read by whoever blocks.

    with deadline.scope(until=time.monotonic() + 20, stopped=lambda: client_gone):
        model.chat(...)                  # a backend gives up at the deadline, or once stopped() is true

    deadline.remaining()                 # seconds left in the innermost scope (None: no deadline)
    deadline.current()                   # the innermost Scope: .expired(), .is_stopped()

The agent loop opens a scope around every model call; model backends read it, so that a server
trickling one byte now and then cannot hold an episode past its time (a read timeout is a gap between
bytes, not a total). Scopes nest (the inner one never outlives the outer one) and are per thread (a
context variable).
"""
from __future__ import annotations

import contextlib
import contextvars
import time
from dataclasses import dataclass
from typing import Callable, Iterator


@dataclass(frozen=True)
class Scope:
    until: float | None                       # time.monotonic() deadline; None: none
    stopped: Callable[[], bool] | None = None  # true once the caller gave up on the call

    def remaining(self) -> float | None:
        return None if self.until is None else self.until - time.monotonic()

    def expired(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0

    def is_stopped(self) -> bool:
        return bool(self.stopped and self.stopped())


_current: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("lis_deadline", default=None)


def current() -> Scope | None:
    return _current.get()


@contextlib.contextmanager
def scope(until: float | None = None, stopped: Callable[[], bool] | None = None) -> Iterator[Scope]:
    """A scope ending at ``until`` (monotonic seconds) or once ``stopped()`` is true, inside any
    scope already open (the earlier deadline wins; either one's ``stopped`` stops)."""
    outer = _current.get()
    if outer is not None:
        if outer.until is not None:
            until = outer.until if until is None else min(until, outer.until)
        if outer.stopped is not None:
            inner, other = stopped, outer.stopped
            stopped = other if inner is None else (lambda: inner() or other())
    s = Scope(until, stopped)
    token = _current.set(s)
    try:
        yield s
    finally:
        _current.reset(token)


def remaining() -> float | None:
    s = _current.get()
    return None if s is None else s.remaining()

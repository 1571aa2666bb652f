"""Waiting in tests: poll a condition until it holds or a deadline passes, instead of a hand-written
loop or a fixed sleep.

    wait_until(lambda: pool.ready() >= 2, 30, "two warm sandboxes")          # AssertionError after 30 s
    if not wait_until(lambda: not alive(pid), 20, "the server gone", fail=False): ...
"""
from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_until(cond: Callable[[], T], timeout: float, what: str, *, interval: float = 0.05,
               fail: bool = True) -> T:
    """The first truthy value of ``cond()``, polled every ``interval`` seconds for ``timeout`` seconds
    (once more at the deadline). Past it: AssertionError naming ``what`` (with ``fail=False``: the
    last falsy value)."""
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got or time.monotonic() >= deadline:
            break
        time.sleep(interval)
    if not got and fail:
        raise AssertionError(f"{what}: not within {timeout:g} s")
    return got

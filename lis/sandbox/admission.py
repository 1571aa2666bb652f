"""Host-wide admission of sandbox starts, shared by every lis process on the machine.

    with admission.admit(max_starting=8, max_starts_per_s=16) as waited_s:
        ...start one sandbox...

At most ``max_starting`` sandboxes are starting at once (a cold Docker start is ~0.4 s of engine
work; 64 at once on 2 cores made each take seconds) and at most ``max_starts_per_s`` start in any
one second, whichever process starts them: eval jobs, GRPO, ``lis serve`` and Inspect evals on one
machine share the limit. The state is lock files in the cache folder (``<cache>/admission``):

- ``slot-<i>``: one ``flock`` per sandbox starting; the kernel releases it when its holder ends,
  however it ends, so a killed process never holds a slot;
- ``rate``: the start times of the last second (JSON), read and written under ``rate.lock``.

A wait ends early on cancellation (:mod:`lis.util.cancel`).
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from pathlib import Path
from typing import Iterator

from lis.paths import cache_dir
from lis.util import cancel

POLL_S = 0.01


def folder() -> Path:
    return cache_dir() / "admission"


def _take_slot(where: Path, n: int, deadline: float | None) -> int:
    """An open, exclusively locked ``slot-<i>`` file descriptor (``i`` < ``n``), waiting for one."""
    where.mkdir(parents=True, exist_ok=True)
    while True:
        for i in range(max(1, n)):
            fd = os.open(where / f"slot-{i}", os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                os.close(fd)
        cancel.check()
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"no sandbox start admitted within the wait (max_starting={n})")
        time.sleep(POLL_S)


def _take_rate(where: Path, per_s: float) -> None:
    """Wait until fewer than ``per_s`` starts were admitted in the last second; then count this one."""
    if per_s <= 0:
        return
    budget = max(1, int(per_s))
    lock = where / "rate.lock"
    state = where / "rate"
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            now = time.time()
            try:
                recent = [t for t in json.loads(state.read_text() or "[]") if isinstance(t, (int, float))]
            except (OSError, ValueError):
                recent = []
            recent = sorted(t for t in recent if now - 1.0 < t <= now + 1.0)
            if len(recent) < budget:
                tmp = state.with_name(f"rate.{os.getpid()}.tmp")
                tmp.write_text(json.dumps(recent + [now]))
                tmp.replace(state)
                return
            wait = recent[-budget] + 1.0 - now
        finally:
            os.close(fd)  # releases the lock
        cancel.sleep(max(POLL_S, min(wait, 1.0)))


@contextlib.contextmanager
def admit(max_starting: int, max_starts_per_s: float, wait_s: float | None = None) -> Iterator[float]:
    """Hold one start admission while the block runs; yields the seconds waited for it. ``max_starting``
    0 (or less) admits at once. Raises TimeoutError past ``wait_s`` (None: no limit) and
    ``cancel.Interrupted`` on cancellation."""
    t0 = time.monotonic()
    if max_starting <= 0:
        yield 0.0
        return
    where = folder()
    fd = _take_slot(where, max_starting, None if wait_s is None else t0 + wait_s)
    try:
        _take_rate(where, max_starts_per_s)
        yield time.monotonic() - t0
    finally:
        os.close(fd)

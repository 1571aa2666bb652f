"""Host-wide admission of sandbox starts, shared by every lis process on the machine.

    with admission.admit(max_starting=8, max_starts_per_s=16) as waited_s:
        ...start one sandbox...

At most ``max_starting`` sandboxes are starting at once (too many at once make each slow) and at
most ``max_starts_per_s`` start in any one second, whichever lis process on the machine starts them.
The state is lock files in ``<cache>/admission``:

- ``slot-<i>``: one ``flock`` per sandbox starting (the kernel releases it however its holder ends);
- ``rate``: the starts that still count for the per-second limit (:func:`_take_rate`), under ``rate.lock``.

A wait ends early on cancellation (:mod:`lis.util.cancel`).
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
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


STUCK_S = 120.0  # a start not marked done after this long belongs to a process that died mid-start


def _rate_state(state: Path, now: float) -> list[dict]:
    """The starts that still count (see :func:`_take_rate`), as read from ``state`` (garbage reads as none)."""
    try:
        rows = json.loads(state.read_text() or "[]")
    except (OSError, ValueError):
        return []
    keep = []
    for r in rows if isinstance(rows, list) else []:
        if not isinstance(r, dict) or not isinstance(r.get("t"), (int, float)):
            continue
        done = r.get("done")
        if isinstance(done, (int, float)):
            if done > now - 1.0:
                keep.append(r)
        elif now - r["t"] < STUCK_S and _alive(r.get("pid")):
            keep.append(r)
    return keep


def _alive(pid) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_state(state: Path, rows: list[dict]) -> None:
    tmp = state.with_name(f"rate.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(rows))
    tmp.replace(state)


def _take_rate(where: Path, per_s: float) -> str | None:
    """Wait until this start cannot make more than ``per_s`` sandboxes created in any one second, then count
    it; returns its token for :func:`_done_rate` (None: no rate limit).

    A sandbox is created between its start's admission and its end, so a start counts from its admission
    until one second after its end (:func:`_done_rate`), and a new one is admitted while fewer than ``per_s``
    count: any two sandboxes created less than a second apart were both counted when the later was admitted.
    A start whose process died stops counting (its pid is gone, or after :data:`STUCK_S`)."""
    if per_s <= 0:
        return None
    budget = max(1, int(per_s))
    lock = where / "rate.lock"
    state = where / "rate"
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            now = time.time()
            rows = _rate_state(state, now)
            if len(rows) < budget:
                token = f"{os.getpid()}-{threading.get_ident()}-{now!r}"
                _write_state(state, rows + [{"t": now, "done": None, "pid": os.getpid(), "id": token}])
                return token
            ends = sorted(r["done"] + 1.0 - now for r in rows if isinstance(r.get("done"), (int, float)))
            wait = ends[len(rows) - budget] if len(ends) > len(rows) - budget else POLL_S * 5
        finally:
            os.close(fd)  # releases the lock
        cancel.sleep(max(POLL_S, min(wait, 1.0)))


def _done_rate(where: Path, token: str | None) -> None:
    """The start of ``token`` is over: it counts for one second more."""
    if token is None:
        return
    lock = where / "rate.lock"
    state = where / "rate"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        now = time.time()
        rows = _rate_state(state, now)
        for r in rows:
            if r.get("id") == token:
                r["done"] = now
        _write_state(state, rows)
    finally:
        os.close(fd)


@contextlib.contextmanager
def admit(max_starting: int, max_starts_per_s: float, wait_s: float | None = None) -> Iterator[float]:
    """Hold one start admission while the block runs; yields the seconds waited for it (``max_starting``
    0: none). Raises TimeoutError past ``wait_s`` (None: no limit)."""
    t0 = time.monotonic()
    if max_starting <= 0:
        yield 0.0
        return
    where = folder()
    fd = _take_slot(where, max_starting, None if wait_s is None else t0 + wait_s)
    token = None
    try:
        token = _take_rate(where, max_starts_per_s)
        yield time.monotonic() - t0
    finally:
        try:
            _done_rate(where, token)
        finally:
            os.close(fd)

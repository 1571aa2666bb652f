"""The sandboxes this process has running, so that every exit path removes them.

``install_signal_handlers()`` (called by the CLI) turns SIGINT/SIGTERM into: cancel
(:mod:`lis.util.cancel`), close every live sandbox, then unwind (130/143); a second signal exits at
once. ``atexit`` closes what is left. After SIGKILL Docker sandboxes stop by themselves (our
connection closes) and ``lis sandbox cleanup`` removes whatever is left.
"""
from __future__ import annotations

import atexit
import logging
import os
import signal
import sys
import threading
import uuid

from lis.util import cancel

log = logging.getLogger(__name__)

_live: dict[int, object] = {}  # strong references: a sandbox nobody closed is still closed at exit
_lock = threading.Lock()
_installed = False
RUN_ID = os.environ.get("LIS_RUN_ID") or uuid.uuid4().hex[:12]  # labels every sandbox this process starts


def register(sb) -> None:
    with _lock:
        _live[id(sb)] = sb


def unregister(sb) -> None:
    with _lock:
        _live.pop(id(sb), None)


def live() -> list:
    with _lock:
        return list(_live.values())


def close_all() -> int:
    """Close every live sandbox; return how many there were."""
    sbs = live()
    for sb in sbs:
        try:
            sb.close()
        except Exception as e:  # keep going: the others must go too
            log.warning("closing sandbox %s failed: %s", getattr(sb, "id", "?"), e)
    return len(sbs)


def _handler(signum, frame):
    """First SIGINT/SIGTERM: cancel, remove our sandboxes, and let the main thread unwind
    (KeyboardInterrupt / SystemExit) so that it records what was in flight. A second: exit at once."""
    again = cancel.requested()
    cancel.request(signum)
    n = close_all()
    if n:
        log.warning("signal %s: removed %d sandbox(es)", signal.Signals(signum).name, n)
    if again:
        hard_exit(128 + signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def hard_exit(status: int) -> None:
    """Remove our sandboxes, flush logs and streams, and end the process now, without waiting for
    worker threads still blocked in a model call."""
    close_all()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe must not stop the exit
            pass
    os._exit(status)


def install_signal_handlers() -> None:
    """SIGINT/SIGTERM close every live sandbox before the process ends (main thread only)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, _handler)
    signal.signal(signal.SIGTERM, _handler)
    _installed = True


atexit.register(close_all)

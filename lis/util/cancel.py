"""Process-wide cancellation: after Ctrl-C nothing new starts — no episode, model call or sandbox.

    from lis.util import cancel
    cancel.check()          # raises Interrupted once cancel.request() was called (e.g. by SIGINT)
    cancel.sleep(2.0)       # a sleep that ends early (raising Interrupted) on cancellation

The signal handler (``lis.sandbox.registry``) calls :func:`request`. :class:`Interrupted` derives from
``BaseException`` so that the ``except Exception`` that turn failures into error records never swallow
it: an interrupted episode is recorded as ``interrupted`` (retried on the next run), never as finished.
"""
from __future__ import annotations

import threading

_event = threading.Event()
_signal: list[int] = []  # the signal that cancelled the run, when one did


class Interrupted(BaseException):
    """The run was cancelled (Ctrl-C / SIGTERM); the current work must stop without a new start."""


def request(signum: int | None = None) -> None:
    """Cancel everything from now on (idempotent); ``signum``: the signal that asked for it."""
    if signum is not None and not _signal:
        _signal.append(signum)
    _event.set()


def signal_number() -> int | None:
    """The signal that cancelled the run (SIGINT 2, SIGTERM 15), or None."""
    return _signal[0] if _signal else None


def requested() -> bool:
    return _event.is_set()


def check() -> None:
    """Raise :class:`Interrupted` if cancellation was requested."""
    if _event.is_set():
        raise Interrupted("interrupted")


def sleep(seconds: float) -> None:
    """Sleep ``seconds``, or raise :class:`Interrupted` as soon as cancellation is requested."""
    if _event.wait(max(0.0, seconds)):
        raise Interrupted("interrupted")


def reset() -> None:
    """Forget a cancellation (tests and long-lived processes that start a new run)."""
    _event.clear()
    _signal.clear()

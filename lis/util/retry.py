"""Calls tried again after a failure, with exponential backoff and jitter: the one retry loop of the
clients that talk to model servers (``OpenAIChatModel``, ``VLLMTokenEngine``).

    backoff = Backoff(base_s=1.0, max_s=60.0)

    def once():
        ...                                     # one request
        raise TryAgain("HTTP 503", retry_after=2.0)   # a failure worth another try

    result = with_retries(once, attempts=6, backoff=backoff, what="model m at http://host/v1", log=log,
                          give_up=lambda reason, n: ModelError(f"...: {reason}; gave up after {n} attempts"))

After Ctrl-C no new attempt is made (:mod:`lis.util.cancel`); any other exception goes through at once.
A *quick* failure (nothing listens at the address) gives up after ``quick_attempts``, so that a wrong
URL fails in seconds rather than after the whole backoff. The first wait of a client whose settings
name none: :func:`default_backoff_s` (``$LIS_BACKOFF_S``, 0 in the tests).
"""
from __future__ import annotations

import logging
import math
import os
import random
import threading
import time
from typing import Callable, TypeVar

from lis.errors import LisError
from lis.util import cancel

T = TypeVar("T")

BACKOFF_ENV = "LIS_BACKOFF_S"  # the first wait before a retry, for clients whose settings name none
DEFAULT_BACKOFF_S = 1.0
MAX_BACKOFF_ENV_S = 3600.0


def backoff_from_env() -> float | None:
    """``$LIS_BACKOFF_S`` in seconds, or None when it is unset or empty; LisError for a value that is not
    a number of seconds from 0 to 3600."""
    raw = os.environ.get(BACKOFF_ENV, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 <= value <= MAX_BACKOFF_ENV_S:  # NaN fails too
        raise LisError(f"{BACKOFF_ENV}={raw[:40]!r} is not a number of seconds from 0 to {MAX_BACKOFF_ENV_S:g}",
                       f"set it to the first wait before a retry (e.g. 1), or unset it for the default "
                       f"({DEFAULT_BACKOFF_S:g} s)")
    return value


def default_backoff_s() -> float:
    """The first wait before a retry for a client whose settings name none: ``$LIS_BACKOFF_S``, else 1 s."""
    value = backoff_from_env()
    return DEFAULT_BACKOFF_S if value is None else value


class TryAgain(Exception):
    """Raised by an attempt that another attempt may fix: ``reason`` in words (for the log and the
    give-up error), the server's ``Retry-After`` seconds, ``quick``: retried only briefly."""

    def __init__(self, reason: str, *, retry_after: float | None = None, quick: bool = False):
        super().__init__(reason)
        self.reason, self.retry_after, self.quick = reason, retry_after, quick


class Backoff:
    """Waits between attempts: ``base_s`` x 2^(attempt-1), capped at ``max_s``, times a jitter drawn
    in [0.5, 1.5) (thread-safe); a server's Retry-After is honoured up to the cap."""

    def __init__(self, base_s: float = 1.0, max_s: float = 60.0, rng: random.Random | None = None):
        self.base_s, self.max_s = base_s, max_s
        self._rng = rng or random.Random()
        self._lock = threading.Lock()

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (from 1)."""
        with self._lock:
            jitter = 0.5 + self._rng.random()
        delay = min(self.max_s, self.base_s * 2 ** (attempt - 1)) * jitter
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_s))
        return delay


def with_retries(once: Callable[[], T], *, attempts: int, backoff: Backoff, give_up: Callable[[str, int], Exception],
                 what: str, log: logging.Logger, quick_attempts: int | None = None,
                 quick_max_s: float | None = None, until: float | None = None,
                 too_late: Callable[[str], Exception] | None = None) -> T:
    """``once()``'s result, calling it again (after a wait) each time it raises :class:`TryAgain`, at
    most ``attempts`` times in all (and at most ``quick_attempts`` quick failures, waiting at most
    ``quick_max_s`` after one); each retry is logged as a warning. After the last attempt raises
    ``give_up(reason, attempts made)``; a wait that would end past ``until`` (monotonic seconds)
    raises ``too_late(reason)`` instead (default: ``give_up``)."""
    attempt, quick = 1, 0
    while True:
        cancel.check()
        try:
            return once()
        except TryAgain as e:
            failure = e
        quick += failure.quick
        if attempt >= attempts or (quick_attempts is not None and quick >= quick_attempts):
            raise give_up(failure.reason, attempt) from None
        delay = backoff.delay(attempt, failure.retry_after)
        total = attempts
        if failure.quick and quick_attempts is not None:  # retried briefly, then it fails
            if quick_max_s is not None:
                delay = min(delay, quick_max_s)
            total = min(attempts, attempt - quick + quick_attempts)
        if until is not None and time.monotonic() + delay >= until:  # no time for another attempt
            raise (too_late(failure.reason) if too_late else give_up(failure.reason, attempt)) from None
        log.warning("%s: %s (attempt %d/%d); retrying in %.1f s", what, failure.reason, attempt, total, delay)
        cancel.sleep(delay)
        attempt += 1

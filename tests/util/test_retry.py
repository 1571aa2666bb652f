"""lis.util.retry: the one retry loop (attempt counting, backoff, quick failures, give-up, cancel)."""
from __future__ import annotations

import logging
import random
import time

import pytest

from lis.util import cancel
from lis.util.retry import Backoff, TryAgain, default_backoff_s, with_retries

log = logging.getLogger("tests.retry")


class GaveUp(Exception):
    pass


def give_up(reason, n):
    return GaveUp(f"{reason}; gave up after {n}")


def failing(*errors, result="ok"):
    """An attempt that raises ``errors`` in turn, then returns ``result``; ``calls`` counts attempts."""
    queue = list(errors)

    def once():
        once.calls += 1
        if queue:
            raise queue.pop(0)
        return result

    once.calls = 0
    return once


def test_backoff_doubles_with_jitter_up_to_the_cap_and_honours_retry_after():
    b = Backoff(base_s=1.0, max_s=5.0, rng=random.Random(0))
    for attempt, base in ((1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)):
        d = b.delay(attempt)
        assert 0.5 * base <= d < 1.5 * base
    assert b.delay(1, retry_after=4.0) >= 4.0
    assert Backoff(0.0, 5.0).delay(3, retry_after=30.0) == 5.0  # Retry-After up to the cap
    assert Backoff(0.0, 5.0).delay(3) == 0.0


def test_retried_until_it_works_and_each_retry_is_logged(caplog):
    once = failing(TryAgain("HTTP 503"), TryAgain("no answer", retry_after=0.0))
    with caplog.at_level(logging.WARNING, logger="tests.retry"):
        assert with_retries(once, attempts=3, backoff=Backoff(0.0), give_up=give_up, what="model m", log=log) == "ok"
    assert once.calls == 3
    assert [r.getMessage() for r in caplog.records] == ["model m: HTTP 503 (attempt 1/3); retrying in 0.0 s",
                                                        "model m: no answer (attempt 2/3); retrying in 0.0 s"]


def test_it_gives_up_after_the_last_attempt_with_the_last_reason():
    once = failing(*(TryAgain(f"fail {i}") for i in range(5)))
    with pytest.raises(GaveUp, match=r"^fail 2; gave up after 3$") as err:
        with_retries(once, attempts=3, backoff=Backoff(0.0), give_up=give_up, what="x", log=log)
    assert once.calls == 3 and err.value.__suppress_context__
    once = failing(TryAgain("once"))
    with pytest.raises(GaveUp, match="gave up after 1"):
        with_retries(once, attempts=1, backoff=Backoff(0.0), give_up=give_up, what="x", log=log)


def test_other_errors_go_through_at_once():
    once = failing(TryAgain("busy"), ValueError("refused"))
    with pytest.raises(ValueError, match="refused"):
        with_retries(once, attempts=5, backoff=Backoff(0.0), give_up=give_up, what="x", log=log)
    assert once.calls == 2


def test_quick_failures_give_up_soon_with_short_waits(caplog):
    """A refused connection: 3 tries in all, at most 0.2 s apart here, although 10 attempts and a long
    backoff are allowed; the log counts against the quick limit."""
    once = failing(*(TryAgain("connection failed", quick=True) for _ in range(10)))
    t0 = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="tests.retry"), pytest.raises(GaveUp, match="gave up after 3"):
        with_retries(once, attempts=10, backoff=Backoff(30.0, 60.0), give_up=give_up, what="x", log=log,
                     quick_attempts=3, quick_max_s=0.2)
    assert once.calls == 3 and time.monotonic() - t0 < 1.0
    assert [r.getMessage() for r in caplog.records] == ["x: connection failed (attempt 1/3); retrying in 0.2 s",
                                                        "x: connection failed (attempt 2/3); retrying in 0.2 s"]
    slow = failing(TryAgain("HTTP 503"), TryAgain("connection failed", quick=True), TryAgain("HTTP 503"),
                   TryAgain("connection failed", quick=True), TryAgain("connection failed", quick=True))
    with pytest.raises(GaveUp, match="connection failed; gave up after 5"):  # quick ones counted apart
        with_retries(slow, attempts=10, backoff=Backoff(0.0), give_up=give_up, what="x", log=log, quick_attempts=3)


def test_a_cancelled_run_makes_no_new_attempt():
    once = failing(TryAgain("busy"), TryAgain("busy"))
    cancel.request()
    try:
        with pytest.raises(cancel.Interrupted):
            with_retries(once, attempts=5, backoff=Backoff(0.0), give_up=give_up, what="x", log=log)
    finally:
        cancel.reset()
    assert once.calls == 0



def test_the_first_wait_of_a_client_without_one_is_lis_backoff_s(monkeypatch):
    """$LIS_BACKOFF_S: 1 s unset; a bad value is one line naming it."""
    from lis.errors import LisError

    monkeypatch.delenv("LIS_BACKOFF_S", raising=False)
    assert default_backoff_s() == 1.0
    monkeypatch.setenv("LIS_BACKOFF_S", "0.01")
    assert default_backoff_s() == 0.01
    monkeypatch.setenv("LIS_BACKOFF_S", "0")
    assert default_backoff_s() == 0.0
    for bad in ("soon", "-1", "nan", "1e9"):
        monkeypatch.setenv("LIS_BACKOFF_S", bad)
        with pytest.raises(LisError, match=r"^LIS_BACKOFF_S=.* is not a number of seconds from 0 to 3600$"):
            default_backoff_s()

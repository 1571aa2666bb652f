"""tests/wait.py: the one polling helper of the suite."""
from __future__ import annotations

import itertools
import time

import pytest

from tests.wait import wait_until


def test_returns_the_first_truthy_value():
    calls = itertools.count()
    assert wait_until(lambda: next(calls) >= 3 and "ready", 5, "three polls", interval=0.001) == "ready"


def test_names_what_it_waited_for_at_the_deadline():
    t0 = time.monotonic()
    with pytest.raises(AssertionError, match=r"the moon: not within 0.2 s"):
        wait_until(lambda: False, 0.2, "the moon", interval=0.01)
    assert 0.2 <= time.monotonic() - t0 < 2


def test_without_fail_it_returns_the_last_value():
    assert wait_until(lambda: 0, 0.05, "nothing", interval=0.01, fail=False) == 0


def test_a_condition_that_raises_stops_the_wait():
    def boom():
        raise AssertionError("the server exited")
    with pytest.raises(AssertionError, match="the server exited"):
        wait_until(boom, 10, "an answer")

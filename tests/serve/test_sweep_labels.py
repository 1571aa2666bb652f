"""lis serve's start-up sweep reads labels as `lis sandbox cleanup` does: any value, never an exception."""
from __future__ import annotations

import socket

import pytest

from lis.serve.sweep import orphaned


@pytest.mark.parametrize("expires", ["never", "", "nan", "9" * 20000, "-1", "2e9"])
@pytest.mark.parametrize("owner", ["garbage", f"{socket.gethostname()}:\u00b2", f"{socket.gethostname()}:99999999999"])
def test_any_label_value_is_read_without_an_exception(expires, owner):
    verdict = orphaned({"lis.run": "serve-earlier", "lis.expires": expires, "lis.owner": owner}, own_run="serve-now")
    assert isinstance(verdict, bool)
    # a value that is not a time is no expiry, an owner that cannot be read is alive: not an orphan
    if expires in ("never", "nan", "9" * 20000, "2e9"):
        assert verdict is False


def test_this_server_run_and_other_runs_are_never_swept():
    assert orphaned({"lis.run": "serve-now", "lis.expires": "0"}, own_run="serve-now") is False
    assert orphaned({"lis.run": "eval-x", "lis.expires": "0"}, own_run="serve-now") is False

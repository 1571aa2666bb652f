"""Fixtures of the model tests: the tiny agent (built once per machine), a free port, a real prompt."""
from __future__ import annotations

import socket

import pytest

from tests.sandbox.conftest import base_config  # noqa: F401  (session fixture: the image, small limits)


@pytest.fixture
def unused_port() -> int:
    """A TCP port nothing listens on (bound once by the OS, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

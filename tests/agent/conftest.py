from __future__ import annotations

import pytest

from lis.sandbox import make_sandbox
from tests.sandbox.conftest import base_config  # noqa: F401  (session fixture: the test image, small limits)


@pytest.fixture
def sb(base_config):  # noqa: F811
    """A Docker sandbox (the backends are proven equal by tests/sandbox)."""
    box = make_sandbox(base_config).start()
    yield box
    box.close()

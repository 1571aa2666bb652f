from tests.sandbox.conftest import base_config  # noqa: F401  (session fixture: the test image, small limits)

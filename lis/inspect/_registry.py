"""What Inspect loads through the ``inspect_ai`` entry point (pyproject.toml): the ``lis`` sandbox
provider (``--sandbox lis``), the lis tasks (``inspect eval lis/math``) and the offline model
``lis-mock/model``. Each module registers on import and reads nothing until used."""
from lis.inspect import provider  # noqa: F401  (registers the sandbox provider `lis`)
from lis.inspect import tasks  # noqa: F401  (registers lis/math, lis/physics, ...)
from lis.inspect import mock_model  # noqa: F401  (registers the model API `lis-mock`)

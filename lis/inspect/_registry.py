"""What Inspect loads through the ``inspect_ai`` entry point (pyproject.toml): the ``lis`` sandbox
provider (``--sandbox lis``) and the lis tasks (``inspect eval lis/math``). Both modules register
on import and read nothing until used."""
from lis.inspect import provider  # noqa: F401  (registers the sandbox provider `lis`)
from lis.inspect import tasks  # noqa: F401  (registers lis/math, lis/physics, ...)

"""Public names of a package, loaded on first use (PEP 562).

    # lis/sandbox/__init__.py
    from lis.util.lazy import lazy_exports

    EXPORTS = {"SandboxPool": "lis.sandbox.pool", ...}   # public name -> the module defining it
    __all__ = sorted(EXPORTS)
    __getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

Why lazily: importing ``lis.sandbox.labels`` runs ``lis/sandbox/__init__.py`` first; an ``__init__``
that imported the pool and the backends would make every such import pay for them, and make them code
of every pipeline stage touching the package (an edit to the pool would re-run stages that never start
a sandbox). Static import graphs do not see these loads: :mod:`lis.pipeline.code_deps` reads
``EXPORTS`` instead.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` whose public names are ``exports``
    (name -> module). A loaded name is cached in the package's namespace."""
    import sys

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # the next lookup does not come here
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__

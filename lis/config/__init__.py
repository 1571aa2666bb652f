"""Typed params: one pydantic model per section, the defaults in one place, and the JSON schema
generated from them (``lis params schema``). ``lis.params.Params.settings(name)`` gives a
section as its model.

The names load on first use (:mod:`lis.util.lazy`): building every section's model costs a few
tenths of a second, which a command that only reads ``sandbox.limits`` (``lis.config.sandbox``)
should not pay.
"""
from lis.util.lazy import lazy_exports

EXPORTS = {
    "SECTIONS": "lis.config.root",
    "ParamsModel": "lis.config.root",
    "params_schema": "lis.config.schema",
    "render_yaml": "lis.config.schema",
}
__all__ = sorted(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

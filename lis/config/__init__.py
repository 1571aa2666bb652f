"""Typed params: one pydantic model per section, the defaults in one place, and the JSON schema
generated from them (``lis params schema``). ``lis.params.Params.settings(name)`` gives a
section as its model."""
from lis.config.root import SECTIONS, ParamsModel
from lis.config.schema import params_schema, render_yaml

__all__ = ["SECTIONS", "ParamsModel", "params_schema", "render_yaml"]

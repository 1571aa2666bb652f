"""Inspect AI sandbox provider ``lis``: our sandboxes (Docker or bubblewrap) under any Inspect eval.

    inspect eval task.py --sandbox lis                      # defaults from params.yaml
    Task(..., sandbox=("lis", "lis-sandbox.yaml"))          # a config file (LisSandboxConfig fields)
    Task(..., sandbox=SandboxEnvironmentSpec("lis", LisSandboxConfig(backend="bwrap")))

Needs the ``inspect`` extra (``pip install -e '.[inspect]'``); Inspect finds the provider through
the ``inspect_ai`` entry point (pyproject.toml). See docs/inspect.md.
"""
from lis.inspect.config import LisSandboxConfig

__all__ = ["LisSandboxConfig"]

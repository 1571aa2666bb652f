"""Inspect AI sandbox provider ``lis``: our sandboxes (Docker or bubblewrap) under any Inspect eval.

    inspect eval task.py --sandbox lis                      # defaults from params.yaml
    Task(..., sandbox=("lis", "lis-sandbox.yaml"))          # a config file (LisSandboxConfig fields)

Needs the ``inspect`` extra; see docs/inspect.md.
"""
from lis.inspect.config import LisSandboxConfig

__all__ = ["LisSandboxConfig"]

"""The ``serve:`` params section for the server (:class:`lis.config.serving.ServeSection`, where the keys and
their defaults live), and where the server keeps what episodes produced."""
from __future__ import annotations

from pathlib import Path

from lis.config.serving import ServeLimits as Limits
from lis.config.serving import ServeSection

RUN_PREFIX = "serve-"  # every server run labels its sandboxes lis.run=serve-<id>; the start-up sweep looks for it

__all__ = ["Limits", "RUN_PREFIX", "ServeSection", "files_dir"]


def files_dir(s: ServeSection, root: Path) -> Path:
    """``serve.files_dir`` as a path: a relative one is relative to the project ``root``."""
    path = Path(s.files_dir)
    return path if path.is_absolute() else root / path

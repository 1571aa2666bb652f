"""The ``serve:`` params section for the server: the section's model
(:class:`lis.config.serving.ServeSection`, where the defaults live) with ``files_dir`` resolved."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lis.config.serving import ServeLimits as Limits
from lis.config.serving import ServeSection
from lis.params import section_model

RUN_PREFIX = "serve-"  # every server run labels its sandboxes lis.run=serve-<id>; the start-up sweep looks for it

__all__ = ["Limits", "RUN_PREFIX", "ServeSettings"]


@dataclass(frozen=True)
class ServeSettings:
    """What the server runs with (the fields of :class:`ServeSection`, ``files_dir`` a path)."""

    model: str
    served_name: str
    host: str
    port: int
    api_key_env: str
    max_concurrent: int
    max_queue: int
    queue_timeout_s: float
    warm: int
    max_body_bytes: int
    files_dir: Path
    files_ttl_s: float
    public_url: str | None
    shutdown_grace_s: float
    limits: Limits

    @classmethod
    def from_params(cls, section: dict[str, Any], root: Path | None = None) -> "ServeSettings":
        """From the ``serve`` section; a relative ``files_dir`` is relative to ``root``."""
        s = section_model(ServeSection, section, "serve", "params")
        files = Path(s.files_dir)
        if root is not None and not files.is_absolute():
            files = root / files
        return cls(**{**dict(s), "files_dir": files})

    def replace(self, **changes: Any) -> "ServeSettings":
        """These settings with the given fields changed (None leaves a field as it is)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

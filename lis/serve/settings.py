"""The ``serve:`` params section as a typed object (validated by the params schema first)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lis.errors import LisError

RUN_PREFIX = "serve-"  # every server run labels its sandboxes lis.run=serve-<id>; the start-up sweep looks for it


@dataclass(frozen=True)
class Limits:
    """Per-episode caps; a request may ask for less, never for more (larger asks are clamped)."""

    max_turns: int = 100
    timeout_s: float = 1800.0
    max_completion_tokens: int = 65536


@dataclass(frozen=True)
class ServeSettings:
    model: str = ""
    served_name: str = "lis-agent"
    host: str = "127.0.0.1"
    port: int = 8100
    api_key_env: str = "LIS_SERVE_API_KEY"
    max_concurrent: int = 8
    max_queue: int = 16
    queue_timeout_s: float = 300.0
    warm: int = 0
    max_body_bytes: int = 1 << 20
    files_dir: Path = Path("output/serve")
    files_ttl_s: float = 86400.0
    public_url: str | None = None
    shutdown_grace_s: float = 10.0
    limits: Limits = field(default_factory=Limits)

    @classmethod
    def from_params(cls, section: dict[str, Any], root: Path | None = None) -> "ServeSettings":
        """From the ``serve`` section; a relative ``files_dir`` is relative to ``root``."""
        sec = dict(section)
        limits = Limits(**(sec.pop("limits", None) or {}))
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(sec) - known)
        if unknown:
            raise LisError(f"serve: unknown key(s) {', '.join(unknown)}", f"known: {', '.join(sorted(known))}")
        files = Path(sec.pop("files_dir", cls.files_dir))
        if root is not None and not files.is_absolute():
            files = root / files
        return cls(**sec, files_dir=files, limits=limits)

    def replace(self, **changes: Any) -> "ServeSettings":
        """These settings with the given fields changed (None leaves a field as it is)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

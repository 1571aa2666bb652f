"""The ``serve:`` params section for the server: the section's model
(:class:`lis.config.serving.ServeSection`, where the keys and their defaults live) with
``files_dir`` resolved to a path."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from lis.config.serving import ServeLimits as Limits
from lis.config.serving import ServeSection
from lis.params import section_model

RUN_PREFIX = "serve-"  # every server run labels its sandboxes lis.run=serve-<id>; the start-up sweep looks for it

__all__ = ["Limits", "RUN_PREFIX", "ServeSettings"]


class ServeSettings(ServeSection):
    """What the server runs with: the section, ``files_dir`` a path (relative ones under the root)."""

    model_config = ConfigDict(frozen=True)

    files_dir: Path  # type: ignore[assignment]

    @classmethod
    def from_params(cls, section: dict[str, Any], root: Path | None = None) -> "ServeSettings":
        """From the ``serve`` section; a relative ``files_dir`` is relative to ``root``."""
        s = section_model(ServeSection, section, "serve", "params")
        files = Path(s.files_dir)
        if root is not None and not files.is_absolute():
            files = root / files
        return cls.model_validate({**dict(s), "files_dir": files})

    def replace(self, **changes: Any) -> "ServeSettings":
        """These settings with the given fields changed (None leaves a field as it is)."""
        return self.model_copy(update={k: v for k, v in changes.items() if v is not None})

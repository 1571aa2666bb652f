"""The ``serve`` section: ``lis serve``, the agent behind an OpenAI-compatible endpoint."""
from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from lis.config.base import NonNegFloat, NonNegInt, PosFloat, PosInt, Section


class ServeLimits(Section):
    """Per-episode caps; a request may ask for less, never for more (larger asks are clamped)."""

    model_config = ConfigDict(frozen=True)

    max_turns: PosInt = 100
    timeout_s: PosFloat = 1800.0
    max_completion_tokens: PosInt = 65536


class ServeSection(Section):
    model: Annotated[str, Field(min_length=1)]
    """the models entry that answers"""
    served_name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")] = "lis-agent"
    host: Annotated[str, Field(min_length=1)] = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8100
    api_key_env: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] = "LIS_SERVE_API_KEY"
    max_concurrent: PosInt = 8
    max_queue: NonNegInt = 16
    queue_timeout_s: PosFloat = 300.0
    warm: NonNegInt = 0
    max_body_bytes: Annotated[int, Field(ge=1024)] = 1 << 20
    files_dir: Annotated[str, Field(min_length=1)] = "output/serve"
    """where episodes' files and trajectories are kept (relative: to the repository)"""
    files_ttl_s: NonNegFloat = 86400.0
    public_url: Annotated[str, Field(pattern=r"^https?://")] | None = None
    shutdown_grace_s: NonNegFloat = 10.0
    limits: ServeLimits = ServeLimits()

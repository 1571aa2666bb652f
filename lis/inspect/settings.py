"""The params the lis Inspect tasks read: which file and profile, and the agent settings of an episode."""
from __future__ import annotations

import dataclasses
from typing import Any

from lis.agent.loop import AgentConfig
from lis.inspect.config import LisSandboxConfig, load_params as load_sandbox_params
from lis.runtime import agent_config
from lis.sandbox.base import Limits, SandboxConfig


def load_params(params: str | None = None, profile: str | None = None):
    """The params of ``params`` (a params.yaml or its folder; default: the lis checkout's, as the
    ``lis`` sandbox provider finds it) under ``profile`` (default: the file's own). Raises LisError."""
    return load_sandbox_params(LisSandboxConfig(params=params, profile=profile))


def agent_settings(params, domain: str, mode: str, box: SandboxConfig | None,
                   overrides: dict[str, Any]) -> AgentConfig:
    """The episode's AgentConfig, as ``lis eval run`` builds it (:func:`lis.runtime.agent_config`) for
    the sandbox ``box`` (None with another provider), then the caller's ``overrides`` that are not None."""
    if box is None and mode != "vanilla":
        sec = params.settings("sandbox")
        box = SandboxConfig(command_timeout_s=float(sec.command_timeout_s),
                            limits=Limits(max_output_bytes=sec.limits.max_output_bytes))
    cfg = agent_config(params, domain=domain, sandbox=box)
    return dataclasses.replace(cfg, **{k: v for k, v in overrides.items() if v is not None})

"""The ``agent`` section of params → :class:`lis.agent.loop.AgentConfig`."""
from __future__ import annotations

import dataclasses
from typing import Any

from lis.agent.loop import AgentConfig
from lis.agent.tools.dispatch import ToolSettings
from lis.models.base import Sampling
from lis.sandbox.base import SandboxConfig


def agent_config(params, *, spec: dict[str, Any] | None = None, domain: str | None = None,
                 sandbox: SandboxConfig | None = None, deterministic: bool = False) -> AgentConfig:
    """The agent settings of an episode from the ``agent`` section, with the context limit of ``domain``
    (``max_context_tokens_by_domain``), the sampling of the model entry ``spec`` and the command timeout
    and output cap of ``sandbox`` (None: the tools' defaults). ``deterministic``: the error output of
    programs run at once comes in a fixed order (:mod:`lis.agent.tools.stderr_order`)."""
    a = params.settings("agent")
    obs, exts = a.observation, a.editor.view_extensions
    tools = ToolSettings(max_lines=obs.max_lines, keep=obs.keep, max_chars=obs.max_chars,
                         view_extensions=tuple(exts) if exts else None, stderr_by_program=deterministic)
    if sandbox is not None:
        tools = dataclasses.replace(tools, command_timeout_s=sandbox.command_timeout_s,
                                    max_output_bytes=sandbox.limits.max_output_bytes)
    context = a.max_context_tokens if domain is None else \
        a.max_context_tokens_by_domain.get(domain, a.max_context_tokens)
    return AgentConfig(max_turns=a.max_turns, max_context_tokens=context,
                       episode_timeout_s=float(a.episode_timeout_s), tools=tools,
                       sampling=Sampling(**(spec or {}).get("sampling", {})))

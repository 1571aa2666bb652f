"""The paper's agent as an Inspect solver: lis's own episode loop, with Inspect's model and sandbox.

    Task(dataset=..., solver=lis_agent(mode="sandbox"), scorer=lis_scorer(), sandbox="lis")

What runs is :func:`lis.agent.episode.run_task`, the code ``lis eval run`` runs (tools, prompts,
budgets of the profile's ``agent`` section or the solver's arguments). The model is the eval's
(:class:`lis.inspect.model_bridge.InspectChatModel`); the sandbox is the sample's: ``lis``'s own
persistent bash session, or for any other provider a shell emulated over its ``exec``
(:mod:`lis.inspect.exec_shell`). Vanilla mode answers once, with no sandbox.

The loop runs on a worker thread; its record becomes the sample's messages, output and store
summary (``lis:trajectory``). An infrastructure error raises :class:`EpisodeError` (the sample is
an error, not a wrong answer), and a sample limit Inspect raised during a model call is raised again
once the record is written (docs/inspect.md).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import threading
from typing import Any

import anyio.from_thread
import anyio.to_thread
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox as current_sandbox

from lis.agent.episode import run_task
from lis.agent.loop import AgentConfig
from lis.agent.trajectory import INFRA, Step, Trajectory
from lis.inspect.events import tool_events
from lis.inspect.exec_shell import ExecShell
from lis.inspect.messages import to_inspect, usage_to_inspect
from lis.inspect.model_bridge import InspectChatModel
from lis.inspect.provider import LisSandboxEnvironment
from lis.inspect.dataset import task_for
from lis.inspect.settings import agent_settings, load_params
from lis.prompts import MODES
from lis.runtime import episode_seed

STORE_KEY = "lis:trajectory"


class EpisodeError(RuntimeError):
    """The episode ended in an infrastructure error (the model server or the sandbox failed)."""


def _sandbox_for(mode: str):
    """(the object lis's loop drives, its SandboxConfig or None) for the sample's sandbox."""
    env = current_sandbox()
    try:
        sb = env.as_type(LisSandboxEnvironment).sb
        return sb, sb.config
    except TypeError:
        inner = getattr(env, "_sandbox", env)
        kind = type(inner).__name__.removesuffix("SandboxEnvironment").lower() or "sandbox"
        return ExecShell(env, kind=kind), None


def _eval_seed() -> int | None:
    """The eval's ``--seed`` (Inspect's active generate config), if one was given."""
    try:
        from inspect_ai.model._generate_config import active_generate_config  # pinned inspect-ai: no public getter
    except ImportError:
        return None
    return active_generate_config().seed


def summary(rec: Trajectory) -> dict[str, Any]:
    """The record without its messages and observation texts (the sample's messages hold them)."""
    d = rec.to_dict()
    d.pop("messages", None)
    for step in d.get("steps", []):
        step.pop("completion_ids", None)
        step.pop("logprobs", None)
        for call in step.get("calls", []):
            call.pop("observation", None)
    return d


def _log_tools(step: Step) -> None:
    """The step's tool calls into the sample's transcript (on the event loop's thread)."""
    from inspect_ai.log._transcript import transcript  # pinned inspect-ai: events are added through _event

    now = dt.datetime.now(dt.timezone.utc)
    for event in tool_events(step, now):
        transcript()._event(event)


def _write_state(state: TaskState, rec: Trajectory, model_name: str) -> None:
    if rec.messages:
        state.messages = to_inspect(rec.messages, model=model_name)
    last = next((m for m in reversed(state.messages) if m.role == "assistant"), None)
    if last is not None:
        out = ModelOutput.from_message(last, stop_reason="tool_calls" if last.tool_calls else "stop")
        out.model = model_name
        out.usage = usage_to_inspect(rec.prompt_tokens, rec.completion_tokens, rec.cached_tokens)
        state.output = out
    state.store.set(STORE_KEY, summary(rec))


@solver
def lis_agent(mode: str = "sandbox", profile: str | None = None, params: str | None = None,
              max_turns: int | None = None, max_context_tokens: int | None = None,
              episode_timeout_s: float | None = None) -> Solver:
    """The paper's agent (lis's loop) in ``mode``: sandbox | vanilla | sandbox_inline.

    Args:
      mode: sandbox (documents as files), vanilla (one direct answer, no sandbox) or sandbox_inline
        (documents in the prompt, a sandbox to work in).
      profile: the params profile whose ``agent`` section sets the budgets (default: params.yaml's own).
      params: the params.yaml to read (default: the lis checkout's).
      max_turns, max_context_tokens, episode_timeout_s: the episode's budgets (default: the ``agent``
        section's)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    p = load_params(params, profile)
    overrides = {"max_turns": max_turns, "max_context_tokens": max_context_tokens,
                 "episode_timeout_s": None if episode_timeout_s is None else float(episode_timeout_s)}
    base_seed = p.settings("eval").seed

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = task_for(state.metadata)
        model = InspectChatModel(get_model())
        sb, box = _sandbox_for(mode) if mode != "vanilla" else (None, None)
        cfg: AgentConfig = agent_settings(p, task.domain, mode, box, overrides)
        given = _eval_seed()
        seed = episode_seed(base_seed if given is None else given, task.id, state.epoch - 1)
        cfg = dataclasses.replace(cfg, sampling=dataclasses.replace(cfg.sampling, seed=seed))
        stop = threading.Event()

        def episode() -> Trajectory:
            return run_task(task, model, mode, cfg, sandbox=sb, should_stop=stop.is_set, seed=seed,
                            on_step=lambda step: anyio.from_thread.run_sync(_log_tools, step),
                            repeat=state.epoch - 1, task_hash=state.metadata.get("task_hash", ""),
                            episode_id=str(state.uuid))

        try:
            rec = await anyio.to_thread.run_sync(episode, abandon_on_cancel=True)
        except BaseException:
            stop.set()  # cancelled (a time limit, Ctrl-C): the episode stops at its next check,
            if hasattr(sb, "kill"):  # and a lis sandbox goes now, its command in flight with it (so that
                sb.kill()            # releasing it does not wait for that command)
            raise
        _write_state(state, rec, model.name)
        if model.limit is not None:
            raise model.limit
        if rec.termination in INFRA:
            raise EpisodeError(f"{rec.termination}: {rec.error or 'no detail'}")
        return state

    return solve

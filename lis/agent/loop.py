"""The episode loop: the model works in the sandbox through the three tools until it submits.

Faithful to llm-in-sandbox 0.2 where the paper defines the method ("Steps Remaining: N", the
CONTINUE reminder, the answer read from the answer file whether or not the model submitted); where
it differs (every tool call of a turn runs, malformed and text tool calls are handled, the token
budget and wall-clock timeout end the episode) see docs/differences.md. A turn's steps are in
:mod:`lis.agent.turn`.
"""
from __future__ import annotations

import copy
import datetime as dt
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from lis.agent.tools.dispatch import ToolSettings
from lis.agent.trajectory import Step, Trajectory
from lis.agent.turn import Conversation, EpisodeEnd, append_remaining, ask, read_reply, run_calls
from lis.models.base import ChatModel, Sampling
from lis.sandbox.base import Sandbox, SandboxError
from lis.util import cancel

log = logging.getLogger(__name__)

CONTINUE_MSG = ("Your last response did not call a function. You must use a function call in every response: "
                "execute_bash to run commands, str_replace_editor to view and edit files, submit when the answer "
                "file is written. Do not ask for human help; work on the task yourself.")


@dataclass
class AgentConfig:
    max_turns: int = 100                     # the paper's max_steps
    max_context_tokens: int = 65536          # the conversation may not grow past this (paper: max_token_limit)
    episode_timeout_s: float = 5400.0        # wall clock for the whole episode (the RL recipe's trajectory_timeout)
    answer_path: str = "/testbed/answer.txt"
    answer_max_bytes: int = 1 << 20
    steps_remaining: bool = True
    tools: ToolSettings = field(default_factory=ToolSettings)
    sampling: Sampling = field(default_factory=Sampling)
    keep_token_ids: bool = False             # keep sampled ids and logprobs per turn (RL)


def first_call_messages(messages: list[dict[str, Any]], cfg: AgentConfig) -> list[dict[str, Any]]:
    """The conversation the model is given on an episode's first turn (the prompt messages with the
    "Steps Remaining" line :func:`run_episode` adds): what a prompt budget must be checked against."""
    history = copy.deepcopy(messages)
    if cfg.steps_remaining and cfg.max_turns > 0:
        append_remaining(history[-1], cfg.max_turns)
    return history


def stopper(should_stop: Callable[[], bool] | None) -> Callable[[], bool]:
    """True once the whole run is cancelled (Ctrl-C, :mod:`lis.util.cancel`) or ``should_stop()``
    says so (one episode's own cancellation, e.g. its client went away)."""
    return lambda: cancel.requested() or bool(should_stop and should_stop())


def run_episode(model: ChatModel, sandbox: Sandbox, messages: list[dict[str, Any]], cfg: AgentConfig,
                record: Trajectory, on_step: Callable[[Step], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> Trajectory:
    """Run one episode on a started sandbox whose input files are in place; fill and return ``record``.

    Never raises for what the model or the commands do: the record's ``termination`` says how the
    episode ended. ``should_stop`` (optional) is this episode's own cancellation, checked wherever
    Ctrl-C (:mod:`lis.util.cancel`) is, and when a call fails: a sandbox killed because its episode
    was cancelled ends it as interrupted, not as an error.
    """
    stopped = stopper(should_stop)
    t0 = time.monotonic()
    deadline = t0 + cfg.episode_timeout_s
    record.started_utc = record.started_utc or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    talk = Conversation(copy.deepcopy(messages))
    try:
        for k in range(cfg.max_turns):
            _before_turn(talk, cfg, k, deadline)
            res = ask(model, talk.history, cfg.sampling.for_turn(k), deadline, stopped)
            msg, calls, step = read_reply(res, k, (record.task_id, k), cfg.keep_token_ids)
            talk.reply(msg, res.usage)
            if not calls:
                talk.add({"role": "user", "content": CONTINUE_MSG})
            done = run_calls(sandbox, calls, step, talk, cfg.tools, deadline, stopped)
            record.steps.append(step)
            if on_step:
                on_step(step)
            if done:
                raise EpisodeEnd("submitted")
        raise EpisodeEnd("max_turns")
    except EpisodeEnd as end:
        _end(record, end)
    record.messages = talk.history
    record.answer = read_answer(sandbox, cfg)
    record.totals()
    record.wall_s = time.monotonic() - t0
    return record


def _before_turn(talk: Conversation, cfg: AgentConfig, k: int, deadline: float) -> None:
    """Turn ``k``'s "Steps Remaining" line; ends the episode past its time or its token budget."""
    if time.monotonic() >= deadline:
        raise EpisodeEnd("timeout")
    if cfg.steps_remaining:
        append_remaining(talk.history[-1], cfg.max_turns - k)
    if talk.tokens() > cfg.max_context_tokens:
        raise EpisodeEnd("token_budget")


def _end(record: Trajectory, end: EpisodeEnd) -> None:
    """How the episode ended, into its record (with the ending turn's step, when it ended one)."""
    record.termination = end.reason
    if end.step is not None:
        record.steps.append(end.step)
    if end.error is not None:
        record.error = end.error


def read_answer(sandbox: Sandbox, cfg: AgentConfig) -> str:
    """The answer file's text, stripped; "" when it is missing or the sandbox is gone."""
    try:
        return sandbox.read_file(cfg.answer_path, max_bytes=cfg.answer_max_bytes).decode("utf-8", "replace").strip()
    except (OSError, SandboxError):
        return ""

"""Who an RL episode's ending belongs to: the policy, or the infrastructure.

    outcome, fault = classify(record, acted=session.sampled > 0, reward=raw)

**Outcomes**: ``submitted`` (the policy finished, its answer scored > 0; reward the score), ``wrong``
(scored 0), ``policy_fault`` (the policy's own actions ended it; reward ``overlong_reward``, in the loss)
and ``infra_error`` (model server or engine, a sandbox that failed or went away for another reason
than the policy's command, an interrupted run; no reward, out of the loss and the group's baseline).

**Policy faults** (``fault``): ``turn_budget``, ``token_budget``, ``episode_timeout`` and ``oom`` (a
policy command filled the sandbox's memory and the kernel killed its supervisor: the sandbox says "out
of memory" with the limit). That is the only way a policy can end its own sandbox, so one that goes
away without that evidence is the infrastructure's; counting an out-of-memory death as infrastructure
would let the policy escape its negative advantage and make the retry resample the worst episodes.
Faults that do not end an episode cost the turn and are counted (:func:`episode_faults`).

**Retries**: only an ``infra_error`` before the policy sampled a token is run again, with the same
seed; after that, a retry would be an outcome-dependent resample.
"""
from __future__ import annotations

from typing import Any

OUTCOMES = ("submitted", "wrong", "policy_fault", "infra_error")
BUDGET_ENDINGS = {"max_turns": "turn_budget", "token_budget": "token_budget", "truncated": "token_budget",
                  "timeout": "episode_timeout"}
MALFORMED = ("bad_json", "unknown_tool", "missing_argument")
OOM_MARK = "out of memory: limit"   # what the sandbox says of a kernel out-of-memory kill (lis.sandbox.base)


def classify(record: Any, *, acted: bool, reward: float | None) -> tuple[str, str | None]:
    """(outcome, fault) of a finished episode's record (see the module doc). ``acted``: the policy
    sampled at least one token; ``reward``: the scorer's value (None when it could not score)."""
    end = record.termination
    if end in BUDGET_ENDINGS:
        return "policy_fault", BUDGET_ENDINGS[end]
    if end == "sandbox_error" and acted and _during_policy_command(record) and OOM_MARK in (record.error or ""):
        return "policy_fault", "oom"
    if end in ("submitted", "answered"):
        if reward is None:
            return "infra_error", None  # no scorer for the task: nothing to learn from, not the policy's doing
        return ("submitted" if reward > 0 else "wrong"), None
    return "infra_error", None  # model_error, sandbox_error before the policy's command, error, interrupted


def _during_policy_command(record: Any) -> bool:
    """The sandbox went away while one of the policy's tool calls ran (the loop records that call with
    ``error: sandbox_error`` in the turn's step)."""
    return any(c.error == "sandbox_error" for s in record.steps for c in s.calls)


def episode_faults(record: Any) -> dict[str, int]:
    """Counts of the faults inside an episode that did not end it: command timeouts, malformed tool calls,
    turns cut at their token budget, commands killed for memory (the sandbox lived on)."""
    calls = [c for s in record.steps for c in s.calls]
    return {"command_timeouts": sum(1 for c in calls if c.timed_out),
            "malformed_calls": sum(1 for c in calls if c.error in MALFORMED),
            "turns_cut": sum(1 for s in record.steps if s.finish_reason == "length"),
            "oom_commands": sum(1 for c in calls if c.error != "sandbox_error" and OOM_MARK in (c.observation or ""))}

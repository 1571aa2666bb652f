"""The answer in OpenAI's wire format (a ``chat.completion``, or ``chat.completion.chunk`` events),
with our extras under the ``lis`` key.

Token usage: OpenAI's ``usage`` counts every upstream call of the episode (``prompt_tokens`` =
the prompts of all calls, ``completion_tokens`` = all completions). ``lis.usage`` splits it the
paper's way: ``prompt_tokens`` (the first prompt: system prompt + task), ``completion_tokens``,
``environment_tokens`` (what the sandbox added: for every call after the first, its prompt minus
the previous prompt minus the previous completion), ``calls`` and ``cached_tokens``.
"""
from __future__ import annotations

import json
import time
from typing import Any

from lis.agent.trajectory import Trajectory
from lis.serve.errors import ApiError

LENGTH = ("max_turns", "token_budget", "timeout")   # ran out of a limit: finish_reason "length"
UPSTREAM = ("model_error",)
UPSTREAM_TIMEOUT = "model_timeout"  # the upstream gave no complete answer before the request's deadline


def usage(rec: Trajectory) -> tuple[dict[str, int], dict[str, int]]:
    """(OpenAI usage, lis usage) of an episode record."""
    prompts = [s.prompt_tokens or 0 for s in rec.steps]
    completions = [s.completion_tokens or 0 for s in rec.steps]
    env = sum(max(0, prompts[k] - prompts[k - 1] - completions[k - 1]) for k in range(1, len(prompts)))
    openai = {"prompt_tokens": sum(prompts), "completion_tokens": sum(completions),
              "total_tokens": sum(prompts) + sum(completions),
              "prompt_tokens_details": {"cached_tokens": sum(s.cached_tokens or 0 for s in rec.steps)}}
    ours = {"prompt_tokens": prompts[0] if prompts else 0, "completion_tokens": sum(completions),
            "environment_tokens": env, "calls": len(prompts),
            "cached_tokens": sum(s.cached_tokens or 0 for s in rec.steps)}
    return openai, ours


def extras(rec: Trajectory, files: list[tuple[str, int]], base_url: str, req_limits: Any,
           ignored: list[str]) -> dict[str, Any]:
    """The ``lis`` object of a response."""
    tid = rec.episode_id
    _, ours = usage(rec)
    return {"trajectory_id": tid, "termination": rec.termination, "turns": rec.turns, "wall_s": round(rec.wall_s, 3),
            "usage": ours, "error": rec.error,
            "files": [{"path": p, "bytes": n, "url": f"{base_url}/v1/files/{tid}/{p}"} for p, n in files],
            "trajectory_url": f"{base_url}/v1/trajectories/{tid}",
            "limits": {"max_turns": req_limits.max_turns, "timeout_s": req_limits.timeout_s,
                       "max_completion_tokens": req_limits.max_completion_tokens},
            **({"ignored_fields": ignored} if ignored else {})}


def finish_reason(rec: Trajectory) -> str:
    return "length" if rec.termination in LENGTH else "stop"


def failure(rec: Trajectory, lis: dict[str, Any], shutting_down: bool) -> ApiError | None:
    """The HTTP error of an episode that did not end on its own terms (None when it did)."""
    if rec.termination in ("submitted", *LENGTH):
        return None
    if rec.termination in UPSTREAM:
        return ApiError(502, f"the upstream model failed: {rec.error}", type="upstream_error", code="model_error",
                        extra=lis)
    if rec.termination == UPSTREAM_TIMEOUT:
        return ApiError(504, f"the upstream model gave no complete answer in time: {rec.error}", type="upstream_error",
                        code="model_timeout", extra=lis)
    if rec.termination == "interrupted":
        why = "the server is shutting down" if shutting_down else (rec.error or "the episode was cancelled")
        return ApiError(503, f"the episode was cancelled: {why}", type="server_error", code="cancelled", extra=lis)
    return ApiError(500, f"the episode failed ({rec.termination}): {rec.error}", type="server_error",
                    code=rec.termination or "error", extra=lis)


def completion(rec: Trajectory, served_name: str, lis: dict[str, Any]) -> dict[str, Any]:
    openai, _ = usage(rec)
    return {"id": f"chatcmpl-{rec.episode_id}", "object": "chat.completion", "created": int(time.time()),
            "model": served_name, "system_fingerprint": None,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": rec.answer, "refusal": None},
                         "logprobs": None, "finish_reason": finish_reason(rec)}],
            "usage": openai, "lis": lis}


def chunk(tid: str, served_name: str, created: int, delta: dict[str, Any] | None, finish: str | None = None,
          **more: Any) -> str:
    """One server-sent event of a streamed answer (``delta`` None: an empty ``choices``, the usage chunk)."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    body = {"id": f"chatcmpl-{tid}", "object": "chat.completion.chunk", "created": created, "model": served_name,
            "system_fingerprint": None, "choices": choices, **more}
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


DONE = "data: [DONE]\n\n"


def error_event(err: ApiError) -> str:
    return f"data: {json.dumps(err.body(), ensure_ascii=False)}\n\n"

"""One episode of the trajectory viewer as a static HTML page (``templates/viewer/episode.html.j2``).

Everything from a record is model or environment output, hence hostile: the templates escape every
value they print (lis.report.html). Long texts are folded in ``<details>``, never cut.
"""
from __future__ import annotations

from typing import Any, Sequence

from lis.report.html import FOLD_CHARS, FOLD_LINES, render

__all__ = ["FOLD_CHARS", "FOLD_LINES", "episode_page", "text"]

# the record's fields the page shows
FIELDS = ("task_id", "domain", "mode", "model", "repeat", "reward", "termination", "error", "turns", "prompt_tokens",
          "completion_tokens", "cached_tokens", "wall_s", "llm_s", "env_s", "sandbox_start_s", "episode_id", "attempt",
          "seed", "run_id", "started_utc", "params_hash", "backend", "image", "answer")
WHOLE_ARGS = ("command", "file_text", "old_str", "new_str")   # arguments shown whole in a <pre>, whatever their length


def text(x: Any) -> str:
    """A record's value as the page writes it in running text (None → "")."""
    return "" if x is None else str(x)


def _call(call: dict[str, Any]) -> dict[str, Any]:
    args = call.get("arguments")
    failed = bool(call.get("error")) or bool(call.get("timed_out")) or (call.get("exit_code") not in (None, 0))
    shown = []
    if isinstance(args, dict):
        for k, v in args.items():   # the command, the edited path and every content argument, whole
            whole = isinstance(v, str) and ("\n" in v or len(v) > 120 or k in WHOLE_ARGS)
            shown.append({"key": str(k), "value": v, "whole": whole})
    return {"tool": call.get("tool"), "id": call.get("id"), "exit_code": call.get("exit_code"),
            "exec_time_s": call.get("exec_time_s"), "timed_out": call.get("timed_out"), "error": call.get("error"),
            "failed": failed, "args": shown,
            "args_block": args if args is not None and not isinstance(args, dict) else None,
            "raw_arguments": call.get("raw_arguments") if not isinstance(args, dict) else None,
            "observation": call.get("observation")}


def _step(step: dict[str, Any], caps: Sequence[str]) -> dict[str, Any]:
    return {**{k: step.get(k) for k in ("index", "prompt_tokens", "completion_tokens", "cached_tokens",
                                         "llm_latency_s", "finish_reason", "text_tool_calls", "reasoning", "content")},
            "caps": list(caps), "calls": [_call(c) for c in (step.get("calls") or [])]}


def episode_page(rec: dict[str, Any], *, ref: str, outcome: str, title: str, index_href: str, job_href: str,
                 prev_href: str | None, next_href: str | None, capabilities: dict[int, Sequence[str]]) -> str:
    """The whole HTML page of one episode."""
    score = rec.get("score") or {}
    prompt = []
    for m in rec.get("messages") or []:  # the task as the model saw it: the messages before its first turn
        if not isinstance(m, dict):
            continue
        if m.get("role") == "assistant":
            break
        prompt.append({"role": str(m.get("role") or "?"), "content": m.get("content")})
    steps = [s for s in (rec.get("steps") or []) if isinstance(s, dict)]
    return render(
        "viewer/episode.html.j2",
        page_title=f"{text(rec.get('task_id'))} · {text(rec.get('model'))} · {text(rec.get('mode'))} — {text(title)}",
        ep={k: rec.get(k) for k in FIELDS}, ref=ref, outcome=outcome, index_href=index_href, job_href=job_href,
        prev_href=prev_href, next_href=next_href, prompt=prompt,
        steps=[_step(s, capabilities.get(s.get("index"), ())) for s in steps],
        score={"scorer": score.get("scorer"), "extracted": score.get("extracted"), "error": score.get("error")},
        score_details={k: v for k, v in score.items() if k not in ("scorer", "extracted", "error")})

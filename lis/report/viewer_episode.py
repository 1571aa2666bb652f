"""One episode of the trajectory viewer as a static HTML page: the task, every turn (reasoning,
content, tool calls with their full arguments, observations, exit codes, tokens, times), the
answer, the score and why the episode ended.

Everything from a record is model or environment output, hence hostile: it is escaped with
:func:`esc` (text and attribute values alike) and never placed in a script. Long texts are folded
in ``<details>``, never cut.
"""
from __future__ import annotations

import html
import json
from typing import Any, Sequence

FOLD_CHARS = 2000   # a text longer than this (or with more lines) is folded, whole
FOLD_LINES = 40


def esc(x: Any) -> str:
    """HTML-escaped text for element content and quoted attribute values (None → "")."""
    return "" if x is None else html.escape(str(x), quote=True)


def num(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    return esc(x)


def block(text: Any, label: str, open_: bool = False, fold_chars: int = FOLD_CHARS, fold_lines: int = FOLD_LINES,
          css: str = "") -> str:
    """A labelled ``<pre>``; folded into ``<details>`` (whole, never cut) when it is long."""
    s = "" if text is None else (text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, indent=2))
    lines = s.count("\n") + 1 if s else 0
    pre = f'<pre class="{esc(css)}">{esc(s)}</pre>' if css else f"<pre>{esc(s)}</pre>"
    if len(s) > fold_chars or lines > fold_lines or open_ is None:
        return (f'<details class="fold"{" open" if open_ else ""}><summary>{esc(label)} — {len(s):,} characters, '
                f"{lines:,} lines</summary>{pre}</details>")
    return f'<div class="label">{esc(label)}</div>{pre}'


def badge(outcome: str) -> str:
    return f'<span class="badge {esc(outcome)}">{esc(outcome)}</span>'


def caps_html(caps: Sequence[str]) -> str:
    return "".join(f'<span class="cap">{esc(c)}</span>' for c in caps)


def _meta(pairs: list[tuple[str, str]]) -> str:
    """A definition list; values are already HTML."""
    return '<dl class="meta">' + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>"


def _call(call: dict[str, Any]) -> str:
    tool = call.get("tool")
    args = call.get("arguments")
    failed = bool(call.get("error")) or call.get("timed_out") or (call.get("exit_code") not in (None, 0))
    head = [f"<b>{esc(tool or '(no tool)')}</b>", f'<span class="muted">id {esc(call.get("id"))}</span>',
            f"exit code <b>{num(call.get('exit_code'))}</b>", f"exec {num(call.get('exec_time_s'), 3)} s"]
    if call.get("timed_out"):
        head.append('<b class="muted">timed out</b>')
    if call.get("error"):
        head.append(f"error <b>{esc(call.get('error'))}</b>")
    parts = [f'<div class="call{" failed" if failed else ""}"><div class="turn-head">{" · ".join(head)}</div>']
    if isinstance(args, dict):
        for k, v in args.items():   # the command, the edited path and every content argument, whole
            if isinstance(v, str) and ("\n" in v or len(v) > 120 or k in ("command", "file_text", "old_str", "new_str")):
                parts.append(block(v, f"{k}", open_=True))
            else:
                parts.append(f'<div class="label">{esc(k)}: <code>{esc(json.dumps(v, ensure_ascii=False))}</code></div>')
    elif args is not None:
        parts.append(block(args, "arguments", open_=True))
    if call.get("raw_arguments") is not None and not isinstance(args, dict):
        parts.append(block(call.get("raw_arguments"), "raw arguments (as the model sent them)", open_=True))
    parts.append(block(call.get("observation"), "observation"))
    parts.append("</div>")
    return "".join(parts)


def _step(step: dict[str, Any], caps: Sequence[str]) -> str:
    idx = step.get("index")
    head = [f"<b>turn {esc(idx)}</b>",
            f"tokens prompt {num(step.get('prompt_tokens'))} / completion {num(step.get('completion_tokens'))}"
            + (f" (cached {num(step.get('cached_tokens'))})" if step.get("cached_tokens") else ""),
            f"LLM {num(step.get('llm_latency_s'), 2)} s",
            f"finish {esc(step.get('finish_reason') or '–')}"]
    if step.get("text_tool_calls"):
        head.append("tool calls parsed from text")
    if caps:
        head.append("capabilities " + caps_html(caps))
    parts = [f'<section class="turn" id="turn-{esc(idx)}"><div class="turn-head">{" · ".join(head)}</div>']
    if step.get("reasoning"):
        parts.append(block(step["reasoning"], "reasoning"))
    if step.get("content"):
        parts.append(block(step["content"], "content", open_=True))
    calls = step.get("calls") or []
    if not calls and not step.get("content") and not step.get("reasoning"):
        parts.append('<div class="muted">(empty turn)</div>')
    parts += [_call(c) for c in calls]
    parts.append("</section>")
    return "".join(parts)


def episode_page(rec: dict[str, Any], *, ref: str, outcome: str, title: str, index_href: str, job_href: str,
                 prev_href: str | None, next_href: str | None, capabilities: dict[int, Sequence[str]],
                 css: str) -> str:
    """The whole HTML page of one episode."""
    score = rec.get("score") or {}
    nav = [f'<a href="{esc(index_href)}">all jobs</a>', f'<a href="{esc(job_href)}">this job</a>']
    if prev_href:
        nav.append(f'<a href="{esc(prev_href)}" rel="prev">previous in this job</a>')
    if next_href:
        nav.append(f'<a href="{esc(next_href)}" rel="next">next in this job</a>')
    task = _meta([
        ("task", f"<code>{esc(rec.get('task_id'))}</code>"), ("domain", esc(rec.get("domain"))),
        ("mode", esc(rec.get("mode"))), ("model", esc(rec.get("model"))), ("repeat", esc(rec.get("repeat"))),
        ("outcome", badge(outcome)), ("reward", num(rec.get("reward"), 4)),
        ("ended", f"<b>{esc(rec.get('termination') or '–')}</b>"
                  + (f" — {esc(rec.get('error'))}" if rec.get("error") else "")),
        ("turns", num(rec.get("turns"))),
        ("tokens", f"prompt {num(rec.get('prompt_tokens'))} · completion {num(rec.get('completion_tokens'))}"
                   f" · cached {num(rec.get('cached_tokens'))}"),
        ("time", f"wall {num(rec.get('wall_s'))} s · LLM {num(rec.get('llm_s'))} s · tools {num(rec.get('env_s'))} s"
                 f" · sandbox start {num(rec.get('sandbox_start_s'))} s"),
        ("episode", f"<code>{esc(ref)}</code> · id <code>{esc(rec.get('episode_id') or '–')}</code>"
                    f" · attempt {esc(rec.get('attempt'))} · seed {esc(rec.get('seed'))}"),
        ("run", f"run {esc(rec.get('run_id') or '–')} · started {esc(rec.get('started_utc') or '–')}"
                f" · settings {esc(rec.get('params_hash') or '–')}"),
        ("sandbox", f"{esc(rec.get('backend') or '–')} · image {esc(rec.get('image') or '–')}"),
    ])
    msgs = rec.get("messages") or []
    prompt = []
    for m in msgs:  # the task as the model saw it: the messages before its first turn
        if not isinstance(m, dict):
            continue
        if m.get("role") == "assistant":
            break
        role = m.get("role") or "?"
        prompt.append(block(m.get("content"), f"{role} message", open_=None if role == "system" else True))
    if not prompt:
        prompt.append('<div class="muted">(no prompt recorded)</div>')
    steps = [s for s in (rec.get("steps") or []) if isinstance(s, dict)]
    turns = [_step(s, capabilities.get(s.get("index"), ())) for s in steps] or ['<div class="muted">(no turns)</div>']
    result = _meta([
        ("scorer", esc(score.get("scorer") or "–")), ("reward", num(rec.get("reward"), 4)),
        ("extracted", f"<code>{esc(json.dumps(score.get('extracted'), ensure_ascii=False))}</code>"),
        *([("score error", esc(score.get("error")))] if score.get("error") else []),
        ("ended", f"<b>{esc(rec.get('termination') or '–')}</b>"), ("error", esc(rec.get("error") or "–")),
    ])
    details = {k: v for k, v in score.items() if k not in ("scorer", "extracted", "error")}
    return "\n".join([
        "<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(rec.get('task_id'))} · {esc(rec.get('model'))} · {esc(rec.get('mode'))} — {esc(title)}</title>",
        f"<style>{css}</style></head><body>",
        f'<nav class="pager">{" ".join(nav)}</nav>',
        f"<h1>{esc(rec.get('task_id'))} {badge(outcome)}</h1>", task,
        "<h2>Task</h2>", *prompt,
        f"<h2>Turns ({len(steps)})</h2>", *turns,
        "<h2>Answer</h2>", block(rec.get("answer") or "", "answer", open_=True),
        "<h2>Score and ending</h2>", result,
        block(details, "score details") if details else "",
        f'<nav class="pager">{" ".join(nav)}</nav>',
        "</body></html>", ""])

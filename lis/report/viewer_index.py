"""The trajectory viewer's listings: ``index.html`` (jobs, and every episode while they fit one
page) and the job pages (one job's episodes, split into parts of at most ``page_rows`` rows).
Each listing is a sortable table filtered by the rows' data-* attributes (viewer_assets.INDEX_JS).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from lis.report.viewer_assets import CSS, INDEX_JS
from lis.report.viewer_episode import badge, caps_html, esc, num

OUTCOMES = ("correct", "partial", "wrong", "error")


@dataclass
class Row:
    rec: dict[str, Any]
    outcome: str
    page: Path                 # the episode's page
    caps: list[str]            # capabilities used in any turn (empty without an annotation)


def _options(name: str, label: str, values: Iterable[str]) -> str:
    opts = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
    return (f'<label>{esc(label)}<select data-filter="{esc(name)}" id="filter-{esc(name)}">'
            f'<option value="">all</option>{opts}</select></label>')


def _head(title: str) -> list[str]:
    return ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"]


def _episode_table(rows: Sequence[Row], with_caps: bool, href: Callable[[Path], str], first: int = 1) -> list[str]:
    """Filters, the table and its script."""
    def distinct(key: str) -> list[str]:
        return sorted({str(r.rec.get(key) or "") for r in rows})

    filters = [_options("model", "model", distinct("model")), _options("domain", "domain", distinct("domain")),
               _options("mode", "mode", distinct("mode")),
               _options("outcome", "outcome", [o for o in OUTCOMES if any(r.outcome == o for r in rows)])]
    if with_caps:
        filters.append(_options("caps", "capability used", sorted({c for r in rows for c in r.caps})))
    filters.append('<label>task or ending contains<input type="search" data-filter="text" id="filter-text"></label>')
    heads = [("#", "num"), ("model", ""), ("domain", ""), ("mode", ""), ("task", ""), ("repeat", "num"),
             ("outcome", ""), ("reward", "num"), ("ended", ""), ("turns", "num"), ("prompt tokens", "num"),
             ("completion tokens", "num"), ("wall s", "num")] + ([("capabilities", "")] if with_caps else [])
    body = []
    for n, row in enumerate(rows, first):
        r, o = row.rec, row.outcome
        text = " ".join(str(x) for x in (r.get("task_id"), r.get("termination"), r.get("error")) if x).lower()
        reward = r.get("reward")
        cells = [
            f'<td class="num">{n}</td>', f"<td>{esc(r.get('model'))}</td>", f"<td>{esc(r.get('domain'))}</td>",
            f"<td>{esc(r.get('mode'))}</td>", f'<td><a href="{esc(href(row.page))}">{esc(r.get("task_id"))}</a></td>',
            f'<td class="num">{esc(r.get("repeat"))}</td>', f'<td data-sort="{OUTCOMES.index(o)}">{badge(o)}</td>',
            f'<td class="num" data-sort="{esc(reward if isinstance(reward, (int, float)) else "")}">{num(reward, 3)}</td>',
            f"<td>{esc(r.get('termination') or '–')}</td>", f'<td class="num">{num(r.get("turns"))}</td>',
            f'<td class="num" data-sort="{esc(r.get("prompt_tokens") or 0)}">{num(r.get("prompt_tokens"))}</td>',
            f'<td class="num" data-sort="{esc(r.get("completion_tokens") or 0)}">{num(r.get("completion_tokens"))}</td>',
            f'<td class="num" data-sort="{esc(r.get("wall_s") or 0)}">{num(r.get("wall_s"))}</td>',
        ] + ([f"<td>{caps_html(row.caps)}</td>"] if with_caps else [])
        body.append(f'<tr data-model="{esc(r.get("model"))}" data-domain="{esc(r.get("domain"))}" '
                    f'data-mode="{esc(r.get("mode"))}" data-outcome="{o}" data-caps="{esc(" ".join(row.caps))}" '
                    f'data-text="{esc(text)}">' + "".join(cells) + "</tr>")
    th = "".join(f'<th class="sortable" data-type="{t}">{esc(h)}</th>' for h, t in heads)
    return [f'<div class="filters">{"".join(filters)}<span>showing <b id="shown">{len(rows)}</b> of {len(rows)}'
            f"</span></div>",
            f'<table id="episodes"><thead><tr>{th}</tr></thead><tbody>', *body, "</tbody></table>",
            f"<script>{INDEX_JS}</script>"]


def job_summary_row(job: tuple[str, str, str], rows: Sequence[Row], link: str) -> str:
    c = Counter(r.outcome for r in rows)
    scored = [float(r.rec["reward"]) for r in rows if r.outcome != "error"]
    mean = f"{100 * sum(scored) / len(scored):.1f}" if scored else "–"
    model, domain, mode = job
    return (f'<tr><td>{esc(model)}</td><td>{esc(domain)}</td><td>{esc(mode)}</td>'
            f'<td class="num"><a href="{esc(link)}">{len(rows)}</a></td>'
            + "".join(f'<td class="num">{c.get(o, 0)}</td>' for o in OUTCOMES) + f'<td class="num">{mean}</td></tr>')


def index_page(*, title: str, rows: Sequence[Row], job_rows: list[str], sources: Sequence[Path],
               problems: Sequence[str], with_caps: bool, href: Callable[[Path], str], page_rows: int) -> str:
    warn = ""
    if problems:
        items = "".join(f"<li>{esc(p)}</li>" for p in problems[:50])
        more = f"<li>… and {len(problems) - 50} more</li>" if len(problems) > 50 else ""
        warn = f'<div class="warn" id="problems"><b>{len(problems)} line(s) skipped</b><ul>{items}{more}</ul></div>'
    listed = "".join(f"<li><code>{esc(p)}</code></li>" for p in sources)
    if len(rows) <= page_rows:
        episodes = ["<h2>Episodes</h2>", *_episode_table(rows, with_caps, href)]
    else:
        episodes = ["<h2>Episodes</h2>",
                    f'<p id="too-many">{len(rows):,} episodes are more than one page lists ({page_rows:,}): '
                    f"open a job above (its episodes, filterable and sortable, in parts of {page_rows:,}).</p>"]
    return "\n".join([
        *_head(title), f"<h1>{esc(title)}</h1>",
        f"<p>{len(rows):,} episodes in {len(job_rows)} job(s). Outcome: <b>correct</b> reward 1, <b>partial</b> "
        f"between, <b>wrong</b> 0, <b>error</b> no reward (infrastructure failure, interrupted or unscorable: left "
        f"out of accuracy).</p>",
        f"<details><summary>inputs ({len(sources)})</summary><ul>{listed}</ul></details>", warn,
        "<h2>Jobs</h2>",
        '<table id="jobs"><thead><tr><th>model</th><th>domain</th><th>mode</th><th>episodes</th>'
        + "".join(f"<th>{o}</th>" for o in OUTCOMES) + "<th>mean reward (%)</th></tr></thead><tbody>"
        + "".join(job_rows) + "</tbody></table>",
        *episodes, "</body></html>", ""])


def job_page(*, title: str, job: tuple[str, str, str], rows: Sequence[Row], part: int, parts: int, first: int,
             with_caps: bool, href: Callable[[Path], str], index_href: str,
             part_hrefs: Sequence[str]) -> str:
    model, domain, mode = job
    nav = [f'<a href="{esc(index_href)}">all jobs</a>']
    if parts > 1:
        nav += [f'<a href="{esc(h)}">part {i}</a>' if i != part else f"<b>part {i}</b>"
                for i, h in enumerate(part_hrefs, 1)]
    return "\n".join([
        *_head(f"{model} · {domain} · {mode} — {title}"),
        f'<nav class="pager">{" ".join(nav)}</nav>',
        f"<h1>{esc(model)} · {esc(domain)} · {esc(mode)}</h1>",
        f"<p>Episodes {first:,}–{first + len(rows) - 1:,}" + (f" (part {part} of {parts})" if parts > 1 else "")
        + "</p>",
        *_episode_table(rows, with_caps, href, first), "</body></html>", ""])

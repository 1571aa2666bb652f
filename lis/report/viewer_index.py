"""The trajectory viewer's listings: ``index.html`` (jobs, and every episode while they fit one
page) and the job pages (one job's episodes, split into parts of at most ``page_rows`` rows); the
templates ``templates/viewer/index.html.j2`` and ``job.html.j2``. Each listing is a sortable table
filtered by the rows' data-* attributes (``templates/viewer/listing.js``).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from lis.report.html import render

OUTCOMES = ("correct", "partial", "wrong", "error")


@dataclass
class Row:
    rec: dict[str, Any]
    outcome: str
    page: Path                 # the episode's page
    caps: list[str]            # capabilities used in any turn (empty without an annotation)


def _text(x: Any) -> str:
    return "" if x is None else str(x)


def _episode_table(rows: Sequence[Row], with_caps: bool, href: Callable[[Path], str],
                   first: int = 1) -> dict[str, Any]:
    """What the filters, the table and its script show (the ``episode_table`` macro)."""
    def distinct(key: str) -> list[str]:
        return sorted({str(r.rec.get(key) or "") for r in rows})

    filters = [{"name": "model", "label": "model", "values": distinct("model")},
               {"name": "domain", "label": "domain", "values": distinct("domain")},
               {"name": "mode", "label": "mode", "values": distinct("mode")},
               {"name": "outcome", "label": "outcome",
                "values": [o for o in OUTCOMES if any(r.outcome == o for r in rows)]}]
    if with_caps:
        filters.append({"name": "caps", "label": "capability used",
                        "values": sorted({c for r in rows for c in r.caps})})
    heads = [("#", "num"), ("model", ""), ("domain", ""), ("mode", ""), ("task", ""), ("repeat", "num"),
             ("outcome", ""), ("reward", "num"), ("ended", ""), ("turns", "num"), ("prompt tokens", "num"),
             ("completion tokens", "num"), ("wall s", "num")] + ([("capabilities", "")] if with_caps else [])
    body = []
    for n, row in enumerate(rows, first):
        r = row.rec
        reward = r.get("reward")
        body.append({
            "n": n, "model": r.get("model"), "domain": r.get("domain"), "mode": r.get("mode"),
            "task_id": r.get("task_id"), "href": href(row.page), "repeat": r.get("repeat"),
            "outcome": row.outcome, "outcome_rank": OUTCOMES.index(row.outcome),
            "reward": reward, "reward_sort": reward if isinstance(reward, (int, float)) else "",
            "ended": r.get("termination") or "–", "turns": r.get("turns"), "prompt_tokens": r.get("prompt_tokens"),
            "completion_tokens": r.get("completion_tokens"), "wall_s": r.get("wall_s"), "caps": list(row.caps),
            "text": " ".join(str(x) for x in (r.get("task_id"), r.get("termination"), r.get("error")) if x).lower()})
    return {"filters": filters, "heads": heads, "rows": body, "with_caps": with_caps}


def job_summary_row(job: tuple[str, str, str], rows: Sequence[Row], link: str) -> dict[str, Any]:
    """One job's line of the index: its episodes by outcome and its mean reward (%)."""
    c = Counter(r.outcome for r in rows)
    scored = [float(r.rec["reward"]) for r in rows if r.outcome != "error"]
    model, domain, mode = job
    return {"model": model, "domain": domain, "mode": mode, "href": link, "episodes": len(rows),
            "counts": [c.get(o, 0) for o in OUTCOMES],
            "mean": f"{100 * sum(scored) / len(scored):.1f}" if scored else "–"}


def index_page(*, title: str, rows: Sequence[Row], job_rows: list[dict[str, Any]], sources: Sequence[Path],
               problems: Sequence[str], with_caps: bool, href: Callable[[Path], str], page_rows: int) -> str:
    return render("viewer/index.html.j2", title=_text(title), n_episodes=len(rows), jobs=job_rows,
                  sources=[str(p) for p in sources], problems=[str(p) for p in problems], outcomes=OUTCOMES,
                  page_rows=page_rows,
                  table=_episode_table(rows, with_caps, href) if len(rows) <= page_rows else None)


def job_page(*, title: str, job: tuple[str, str, str], rows: Sequence[Row], part: int, parts: int, first: int,
             with_caps: bool, href: Callable[[Path], str], index_href: str,
             part_hrefs: Sequence[str]) -> str:
    model, domain, mode = job
    return render("viewer/job.html.j2", title=_text(title), model=model, domain=domain, mode=mode,
                  index_href=index_href, part=part, n_parts=parts, first=first, last=first + len(rows) - 1,
                  parts=[{"number": i, "href": h, "current": i == part} for i, h in enumerate(part_hrefs, 1)],
                  table=_episode_table(rows, with_caps, href, first))

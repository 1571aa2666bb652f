"""``lis view``: trajectories (the eval runner's JSONL records) as static HTML that opens from disk.

    site = view([Path("data/eval/base/math/sandbox"), Path("other/trajectories.jsonl")], Path("view"))
    # view/index.html            a summary per job; one row per episode (sortable, filterable by model,
    #                            domain, mode, outcome, capability, text) while they fit one page
    # view/jobs/<model>/<domain>/<mode>[-k].html        one job's episodes, in parts of PAGE_ROWS rows
    # view/episodes/<model>/<domain>/<mode>/<n>-<task>-r<repeat>.html   one page per episode

Each input is a ``trajectories.jsonl`` or an eval job folder holding one. Pages stay small at any
scale (one per episode, listings of at most PAGE_ROWS rows); links are relative and nothing is
fetched from a network, so the folder can be copied anywhere.

Outcome: ``error`` without a reward (what metrics.json counts as errors), ``correct`` for 1,
``wrong`` for 0, ``partial`` in between. Capabilities: an optional per-turn annotation
``{(episode_ref(record), step index): [capability, ...]}`` from ``lis view --classify`` or
:func:`read_capabilities` adds the capability filter. (This module imports no analysis: the report
stage's code stays its own.)
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from lis.errors import LisError
from lis.agent.trajectory import Trajectory
from lis.records import RecordError, check
from lis.report.viewer_episode import episode_page
from lis.report.viewer_index import OUTCOMES, Row, index_page, job_page, job_summary_row
from lis.util.jsonl import iter_jsonl

log = logging.getLogger("lis.report.viewer")

PAGE_ROWS = 5000      # rows of one listing page (an index row is about 550 bytes)
MARKER = ".lis-view"  # marks a folder this viewer wrote (and may therefore rewrite)
Capabilities = Mapping[tuple[str, int], Sequence[str]]


def outcome(rec: Mapping[str, Any]) -> str:
    r = rec.get("reward")
    if r is None or not isinstance(r, (int, float)) or isinstance(r, bool):
        return "error"
    if r >= 1.0 - 1e-9:
        return "correct"
    return "wrong" if r <= 1e-9 else "partial"


def episode_ref(rec: Mapping[str, Any]) -> str:
    """What names an episode across jobs: ``model/domain/task#repeat@mode``."""
    return f"{rec.get('model')}/{rec.get('domain')}/{rec.get('task_id')}#{rec.get('repeat', 0)}@{rec.get('mode')}"


@dataclass
class Loaded:
    records: list[dict[str, Any]]
    sources: list[Path]
    problems: list[str] = field(default_factory=list)   # lines skipped, and why


def input_files(inputs: Iterable[Path | str]) -> list[Path]:
    """The JSONL files the inputs name: a file as is, a job folder's ``trajectories.jsonl``."""
    files: list[Path] = []
    for raw in inputs:
        p = Path(raw)
        if p.is_dir():
            f = p / "trajectories.jsonl"
            if not f.is_file():
                raise LisError(f"{p}: no trajectories.jsonl in this folder",
                               "give an eval job folder (data/eval/<model>/<domain>/<mode>) or a trajectories.jsonl")
            p = f
        elif not p.exists():
            raise LisError(f"{p}: no such file or folder", "give trajectories.jsonl files or eval job folders that exist")
        elif not p.is_file():
            raise LisError(f"{p}: not a file or folder", "give trajectories.jsonl files or eval job folders")
        if p.resolve() not in {f.resolve() for f in files}:
            files.append(p)
    if not files:
        raise LisError("no input given", "name one or more trajectories.jsonl files or eval job folders")
    return files


def load(inputs: Iterable[Path | str]) -> Loaded:
    """Every record of the inputs; blank lines are ignored, a torn or non-record line is skipped
    and reported (never fatal: a crash mid-write leaves a torn last line)."""
    files = input_files(inputs)
    out = Loaded([], files)
    for f in files:
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise LisError(f"{f}: cannot be read ({e.strerror or e})", "check the path and its permissions") from None
        skipped: list[tuple[int, str]] = []
        for n, rec in iter_jsonl(text, mode="tolerant", where=str(f), skipped=skipped):
            if "task_id" not in rec or "model" not in rec:
                skipped.append((n, "not a trajectory record (no task_id/model)"))
                continue
            try:
                check(Trajectory, rec, where="a trajectory record")  # the page trusts the types
            except RecordError as e:
                skipped.append((n, str(e).removeprefix("a trajectory record: ")))
                continue
            out.records.append(rec)
        out.problems += [f"{f}:{n}: {why}; skipped" for n, why in sorted(skipped)]
    return out


def read_capabilities(path: Path | str) -> dict[tuple[str, int], list[str]]:
    """Per-turn capabilities from a JSONL whose rows name the episode by its ref (``{"episode": ref,
    "step": i, "capabilities": [...]}``) or by its fields, as the behaviour stage's turns.jsonl does."""
    p = Path(path)
    if not p.is_file():
        raise LisError(f"{p}: no such capabilities file",
                       "give a JSONL of {episode, step, capabilities} rows or the behaviour stage's turns.jsonl")
    return parse_capabilities(p.read_text(encoding="utf-8"), str(p))


def parse_capabilities(text: str, where: str) -> dict[tuple[str, int], list[str]]:
    """:func:`read_capabilities` on text already read (``where`` names it in errors)."""
    out: dict[tuple[str, int], list[str]] = {}
    hint = ('each line is {"episode": "<model/domain/task#repeat@mode>", "step": 0, '
            '"capabilities": ["file"]} or a row of the behaviour stage\'s turns.jsonl')
    skipped: list[tuple[int, str]] = []
    for n, row in iter_jsonl(text, mode="tolerant", where=where, skipped=skipped):
        if skipped:  # an earlier line is not a JSON object: stop there
            break
        try:
            ref = str(row["episode"]) if "episode" in row else episode_ref(
                {k: row[k] for k in ("model", "domain", "task_id", "repeat", "mode")})
            key = (ref, int(row["step"]))
            caps = [str(c) for c in row["capabilities"]]
        except (KeyError, TypeError, ValueError):
            raise LisError(f"{where}:{n}: not a capabilities row", hint) from None
        out[key] = caps
    if skipped:  # strict in effect, with this file's own message for a line that is not a JSON object
        raise LisError(f"{where}:{skipped[0][0]}: not a capabilities row ({skipped[0][1]})", hint)
    return out


# -- the site -------------------------------------------------------------------------------------
def _slug(s: Any, limit: int = 60) -> str:
    """A file-name-safe part that cannot climb out of its folder (hash-suffixed when characters were replaced)."""
    s = str(s)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", s).lstrip(".")[:limit] or "_"
    if safe != s:
        safe += "-" + hashlib.sha1(s.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return safe


def job_page_rel(model: Any, domain: Any, mode: Any) -> str:
    """Where :func:`render_site` writes a job's (first) listing page, relative to its folder."""
    return f"jobs/{_slug(model)}/{_slug(domain or '_')}/{_slug(mode or '_')}.html"


def _job(rec: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(rec.get("model")), str(rec.get("domain") or ""), str(rec.get("mode") or ""))


def _sort_key(rec: Mapping[str, Any]) -> tuple:
    return (*_job(rec), str(rec.get("task_id")), int(rec.get("repeat") or 0), int(rec.get("attempt") or 0))


def _prepare_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise LisError(f"{out}: exists and is not a folder", "give --out a folder to write the pages into")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise LisError(f"{out}: a folder with other files in it; the viewer only rewrites folders it wrote",
                       "give --out an empty or new folder")
    for old in ("episodes", "jobs"):   # pages of an earlier view: replaced as a whole
        if (out / old).is_dir():
            shutil.rmtree(out / old)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("written by lis view; the folder is rewritten by the next `lis view --out` here\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", errors="replace") as f:   # lone surrogates of a record → '?'
        f.write(text)


def _rel(target: Path, page: Path) -> str:
    return os.path.relpath(target, page.parent).replace(os.sep, "/")


def render_site(loaded: Loaded, out: Path, capabilities: Capabilities | None = None,
                title: str = "Trajectories", page_rows: int = PAGE_ROWS) -> Path:
    """Write index.html, the job pages (in parts of at most ``page_rows`` episodes) and one page per
    episode under ``out``; return the index."""
    out = Path(out)
    if page_rows < 1:
        raise LisError(f"page_rows {page_rows}: must be at least 1", "give a positive number of rows per page")
    _prepare_out(out)
    caps_by_ep: dict[str, dict[int, list[str]]] = defaultdict(dict)
    for (ref, step), caps in (capabilities or {}).items():
        caps_by_ep[ref][int(step)] = list(caps)
    with_caps = capabilities is not None
    by_job: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    used: set[Path] = set()
    for rec in sorted(loaded.records, key=_sort_key):
        job = _job(rec)
        folder = out / "episodes" / _slug(job[0]) / _slug(job[1] or "_") / _slug(job[2] or "_")
        n = len(by_job[job])
        page = folder / f"{n:05d}-{_slug(rec.get('task_id'), 40)}-r{_slug(rec.get('repeat', 0), 8)}.html"
        while page in used:  # two jobs whose names slug alike
            page = page.with_name(page.stem + "_.html")
        used.add(page)
        caps = caps_by_ep.get(episode_ref(rec), {})
        by_job[job].append(Row(rec, outcome(rec), page, sorted({c for cs in caps.values() for c in cs})))
    index = out / "index.html"
    job_rows = []
    for job, rows in sorted(by_job.items()):
        base = out / job_page_rel(*job)
        base = base.with_name(base.name[:-len(".html")])
        parts = [rows[i:i + page_rows] for i in range(0, len(rows), page_rows)]
        part_pages = [base.with_name(base.name + (f"-{k}" if k > 1 else "") + ".html") for k in range(1, len(parts) + 1)]
        part_of: dict[int, Path] = {}
        for k, (chunk, jp) in enumerate(zip(parts, part_pages), 1):
            for r in chunk:
                part_of[id(r)] = jp
            _write(jp, job_page(title=title, job=job, rows=chunk, part=k, parts=len(parts),
                                first=1 + (k - 1) * page_rows, with_caps=with_caps,
                                href=lambda q, jp=jp: _rel(q, jp), index_href=_rel(index, jp),
                                part_hrefs=[_rel(p, jp) for p in part_pages]))
        job_rows.append(job_summary_row(job, rows, _rel(part_pages[0], index)))
        for i, r in enumerate(rows):
            ref = episode_ref(r.rec)
            _write(r.page, episode_page(
                r.rec, ref=ref, outcome=r.outcome, title=title, index_href=_rel(index, r.page),
                job_href=_rel(part_of[id(r)], r.page),
                prev_href=_rel(rows[i - 1].page, r.page) if i > 0 else None,
                next_href=_rel(rows[i + 1].page, r.page) if i + 1 < len(rows) else None,
                capabilities=caps_by_ep.get(ref, {})))
    all_rows = [r for _, rows in sorted(by_job.items()) for r in rows]
    _write(index, index_page(title=title, rows=all_rows, job_rows=job_rows, sources=loaded.sources,
                             problems=loaded.problems, with_caps=with_caps, href=lambda q: _rel(q, index),
                             page_rows=page_rows))
    log.info("wrote %s (%d episodes in %d jobs)", index, len(all_rows), len(by_job))
    return index


def view(inputs: Sequence[Path | str], out: Path, capabilities: Capabilities | None = None,
         title: str = "Trajectories", page_rows: int = PAGE_ROWS) -> Path:
    """Load the inputs and write the site; return the index's path."""
    loaded = load(inputs)
    for p in loaded.problems:
        log.warning("%s", p)
    return render_site(loaded, out, capabilities, title, page_rows)

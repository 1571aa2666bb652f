"""``paper_figures/index.md``, ``index.json`` and ``index.html``: every table and figure, each with its
provenance (the inputs it read with their hashes, the params sections it depends on, commit,
profile), the image, the stage timings the inputs record, and every input file with its hash.
The pages lead with what the run shows (:data:`LEAD`: the learning check and the training curves);
the provenance comes after the results (Markdown) or folded under each item (HTML).
The HTML page (template ``templates/index.html.j2``) is static (inline CSS, relative links): it opens
from the disk without a server.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lis.manifest import write_json
from lis.report.figures import Figure
from lis.report.html import render
from lis.report.tables import Table


LEAD = ("learning_check", "training_curves")  # shown first: what the embedded default's run does show


def _lead_first(items: list) -> list:
    return sorted(items, key=lambda x: LEAD.index(x.id) if x.id in LEAD else len(LEAD))


def _image_facts(image: dict[str, Any]) -> list[tuple[str, str]]:
    inside = image.get("inside") or {}
    libs = ", ".join(f"{k} {v}" for k, v in sorted((inside.get("libraries") or {}).items()) if v)
    size = image.get("size_mb")
    return [("tag", str(image.get("tag") or "(no Docker: root filesystem only)")),
            ("image id", str(image.get("id") or image.get("rootfs") or "")[:40]),
            ("size", f"{size:.0f} MB (the paper's image: about 1,100 MB)" if isinstance(size, (int, float)) else "–"),
            ("build path", f"{image.get('build_path')} ({image.get('base')})"),
            ("OS / Python", f"{inside.get('os')} / {inside.get('python')}"), ("libraries", libs or "–")]


def _inputs_text(paths: list[str], hashes: dict[str, str]) -> str:
    return ", ".join(f"{p} ({(hashes.get(p) or '')[:12]})" for p in paths)


def _prov(item: Table | Figure, hashes: dict[str, str], section_hashes: dict[str, str]) -> dict[str, Any]:
    return {"inputs": {p: hashes.get(p) for p in item.inputs},
            "params": {s: section_hashes.get(s) for s in item.sections}}


def _html_data(*, title: str, profile: str, commit: str, params_hash: str, tag: str, viewer: str | None,
               facts: list[tuple[str, str]], tables: list[Table], figures: list[Figure], hashes: dict[str, str],
               timings: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``index.html.j2`` shows, as plain data (every value text; the template escapes it)."""
    def cell(c: Any) -> dict[str, Any]:
        return {"text": str(c), "href": getattr(c, "href", None) or None}

    lead = [x for x in _lead_first([*tables, *figures]) if x.id in LEAD]
    return {
        "title": str(title), "profile": str(profile), "commit": commit, "params_hash": params_hash[:12],
        "tag": str(tag), "viewer": viewer,
        "lead": [{"id": str(x.id), "kind": "table" if isinstance(x, Table) else "figure"} for x in lead],
        "nav": [{"id": str(x.id), "number": str(x.number)} for x in [*lead, *[y for y in [*figures, *tables]
                                                                            if y.id not in LEAD]]],
        "figures": [{"id": str(f.id), "number": str(f.number), "title": str(f.title), "waiting": str(f.waiting or ""),
                     "inputs": _inputs_text(f.inputs, hashes) or "–", "params": ", ".join(f.sections),
                     "notes": [str(n) for n in f.notes]} for f in figures],
        "tables": [{"id": str(t.id), "number": str(t.number), "title": str(t.title),
                    "waiting": str(t.waiting) if t.waiting and not t.rows else "",
                    "columns": [str(c) for c in t.columns], "rows": [[cell(c) for c in r] for r in t.rows],
                    "notes": [str(n) for n in ([t.paper] if t.paper else []) + t.notes if n],
                    "inputs": _inputs_text(t.inputs, hashes) or "(params only)", "params": ", ".join(t.sections) or "–"}
                   for t in tables],
        "image_facts": [(str(k), str(v)) for k, v in facts],
        "timings": [{k: str(x[k]) for k in ("stage", "what", "wall_s")} for x in timings],
        "inputs": sorted(hashes.items()),
    }


def write_index(out: Path, *, title: str, profile: str, git: dict[str, Any], image_manifest: dict[str, Any],
                tables: list[Table], figures: list[Figure], hashes: dict[str, str], section_hashes: dict[str, str],
                params_hash: str, timings: list[dict[str, Any]], extra: dict[str, Any] | None = None,
                viewer: str | None = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    commit = (git.get("commit") or "unknown")[:12] + (" (uncommitted changes)" if git.get("dirty") else "")
    image = image_manifest.get("image") or {}
    tag = image.get("tag") or ""
    facts = _image_facts(image)

    # -- Markdown ---------------------------------------------------------------------------------
    md = [f"# {title}", "",
          f"Regenerated by `lis report` from the pipeline's artifacts — profile `{profile}`, commit `{commit}`, "
          f"params hash `{params_hash[:12]}`, sandbox image `{tag}`.",
          "Every table and figure below is rebuilt by `snakemake --cores all paper` (or `dvc repro`); "
          "the page with everything: [index.html](index.html)"
          + (f"; every episode: [the trajectory viewer]({viewer})." if viewer else "."), ""]
    lead = [x for x in _lead_first([*tables, *figures]) if x.id in LEAD]
    if lead:
        md += ["## What this run shows", ""]
        for x in lead:
            if isinstance(x, Table):
                md += [f"**{x.number}**: {x.title} ([md](tables/{x.id}.md), [csv](tables/{x.id}.csv))"
                       + (f" — _{x.waiting}_" if x.waiting and not x.rows else ""), ""]
                md += [f"- {n}" for n in x.notes if n.startswith("Verdict")] + [""]
            else:
                md += [f"**{x.number}**: {x.title}" + (f" — _{x.waiting}_" if x.waiting else ""), "",
                       f"![{x.number}](figures/{x.id}.png)", ""]
    md += ["## Tables", ""]
    for t in tables:
        state = f" — _{t.waiting}_" if t.waiting and not t.rows else ""
        md.append(f"- **{t.number}**: {t.title} ([md](tables/{t.id}.md), [csv](tables/{t.id}.csv), "
                  f"[tex](tables/{t.id}.tex)){state}")
    md += ["", "## Figures", ""]
    for f in figures:
        state = f" — _{f.waiting}_" if f.waiting else ""
        md.append(f"- **{f.number}**: {f.title} ([png](figures/{f.id}.png), [pdf](figures/{f.id}.pdf)){state}")
        md += [f"  - {n}" for n in f.notes]
    md += ["", "## Provenance of each table and figure", ""]
    for t in tables:
        md.append(f"- **{t.number}**: inputs {', '.join(f'`{p}`' for p in t.inputs) or '(params only)'}; params "
                  f"{', '.join(t.sections) or '–'}")
    for f in figures:
        md.append(f"- **{f.number}**: inputs {', '.join(f'`{p}`' for p in f.inputs) or '–'}")
    md += ["", "## Sandbox image (stage `image`)", "", "| | |", "|---|---|", *(f"| {k} | `{v}` |" for k, v in facts),
           "", "## Stage timings", ""]
    if timings:
        md += ["| stage | what | wall time (s) | from |", "|---|---|---|---|"]
        md += [f"| {x['stage']} | {x['what']} | {x['wall_s']} | `{x['file']}` |" for x in timings]
    else:
        md.append("None recorded in the inputs.")
    md += ["", "## Inputs", "", "| file | sha256 |", "|---|---|"]
    md += [f"| `{p}` | `{h[:16]}` |" for p, h in sorted(hashes.items())]
    md += ["", f"Git: commit `{git.get('commit')}`, branch `{git.get('branch')}`, dirty: {git.get('dirty')}.", ""]
    md_path = out / "index.md"
    md_path.write_text("\n".join(md), encoding="utf-8")

    # -- JSON -------------------------------------------------------------------------------------
    js = write_json(out / "index.json", {
        "title": title, "profile": profile, "git": git, "params_hash": params_hash, "params_sections": section_hashes,
        "image": {k: image.get(k) for k in ("tag", "id", "size_bytes", "build_path", "content_hash")},
        "image_params_hash": image_manifest.get("params_hash"),
        "tables": [{"id": t.id, "number": t.number, "title": t.title, "files": [f"tables/{t.id}.{e}" for e in
                                                                                ("md", "csv", "tex")],
                    "rows": len(t.rows), "waiting": t.waiting or None, **_prov(t, hashes, section_hashes)}
                   for t in tables],
        "figures": [{"id": f.id, "number": f.number, "title": f.title, "files": [f"figures/{f.id}.{e}" for e in
                                                                                 ("png", "pdf")],
                     "waiting": f.waiting or None, **_prov(f, hashes, section_hashes)} for f in figures],
        "inputs": dict(sorted(hashes.items())), "timings": timings, **(extra or {}),
    })

    # -- HTML -------------------------------------------------------------------------------------
    page = render("index.html.j2", **_html_data(
        title=title, profile=profile, commit=commit, params_hash=params_hash, tag=tag, viewer=viewer, facts=facts,
        tables=tables, figures=figures, hashes=hashes, timings=timings))
    html_path = out / "index.html"
    html_path.write_text(page, encoding="utf-8")
    return [md_path, js, html_path]

"""``lis report``: every table and figure of the paper from the declared inputs of the configured jobs.

    paths = build_report(root, params.data, params.profile, Path("paper_figures"))

Reads exactly :func:`lis.report.inputs.declared_inputs`; tables and figures whose inputs are not
configured are still written and say what they wait for.
"""
from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any

from lis.manifest import git_state
from lis.report import figures as F
from lis.report import tables_analysis as TA
from lis.report import tables_eval as TE
from lis.report import tables_static as TS
from lis.report.context import DOMAIN_TITLES, VIEWER_DIR, Context
from lis.report.index import write_index
from lis.report.inputs import ANALYSIS, IMAGE_MANIFEST
from lis.report.replicates import replicates_table
from lis.report.tables import Table, write_table
from lis.report.viewer import MARKER, Loaded, parse_capabilities, render_site
from lis.util.hashing import hash_obj
from lis.util.progress import at

log = logging.getLogger("lis.report")

SECTIONS = ("report", "jobs", "models", "tasks")  # the params the stage declares (report.smk, dvc.yaml)


def _timings(ctx: Context) -> list[dict[str, Any]]:
    out = []
    for j in ctx.inputs.jobs:
        m = ctx.metrics(j.model, j.domain, j.mode) or {}
        wall = (m.get("time_s") or {}).get("wall")
        if wall is not None:
            out.append({"stage": "eval", "what": f"{j.model} / {j.domain} / {j.mode}", "wall_s": wall, "file": j.metrics})
    for run in ctx.inputs.runs:
        rel = ctx.inputs.run_files(run)[0]
        m = ctx.reader.json(rel)
        if m.get("wall_s") is not None:
            out.append({"stage": "grpo" if run.startswith("grpo-") else "llm_rl", "what": run, "wall_s": m["wall_s"],
                        "file": rel})
    for name in ctx.inputs.model_dirs:
        m = ctx.reader.model_manifest(name)
        wall = m.get("wall_s")
        if wall is not None and m.get("kind") in ("base", "sft"):
            out.append({"stage": m["kind"], "what": name, "wall_s": wall, "file": m.get("_file")})
    return out


def _stage_shares(timings: list[dict[str, Any]]) -> dict[str, Any]:
    """Recorded stage time per kind of stage and its share (logged: GRPO's share of the run)."""
    by_stage: dict[str, float] = {}
    for x in timings:
        by_stage[x["stage"]] = by_stage.get(x["stage"], 0.0) + float(x["wall_s"])
    total = sum(by_stage.values())
    if not total:
        return {}
    order = sorted(by_stage.items(), key=lambda kv: -kv[1])
    log.info("recorded stage time %.0f s (stages run side by side: a sum, not the pipeline's wall time): %s", total,
             ", ".join(f"{k} {v:.0f} s ({100 * v / total:.0f} %)" for k, v in order))
    return {"total_s": round(total, 1), "stages": {k: {"wall_s": round(v, 1), "share": round(v / total, 4)}
                                                   for k, v in order}}


def _figure1_grid(ctx: Context) -> tuple[list[dict[str, Any]], list[str], list[str], list[str]]:
    domains = ctx.benchmark_domains()
    grid, files = [], []
    models = [m for m in ctx.inputs.models if any(ctx.inputs.has_job(m, d, "sandbox") for d in domains)]
    for m in models:
        for d in domains:
            v, s = ctx.metrics(m, d, "vanilla"), ctx.metrics(m, d, "sandbox")
            files += ctx.job_files(m, d, "vanilla") + ctx.job_files(m, d, "sandbox")
            va, sa = TE._acc(v), TE._acc(s)
            grid.append({"model": m, "domain": d, "sandbox_accuracy": sa, "vanilla_accuracy": va,
                         "delta": None if va is None or sa is None else sa - va,
                         "sandbox_n": (s or {}).get("scored"), "vanilla_n": (v or {}).get("scored")})
    return grid, models, domains, files


def _viewer(ctx: Context, out: Path) -> str:
    """Every job's episodes as static pages (lis view) under out/trajectories, with each turn's
    capabilities from the behaviour stage; the tables' accuracy cells link to the job pages."""
    records, sources = [], []
    for j in ctx.inputs.jobs:
        records += ctx.records(j.model, j.domain, j.mode)
        sources.append(Path(j.trajectories))
    caps = parse_capabilities(ctx.reader.text(ANALYSIS["turns"]), ANALYSIS["turns"])   # read once, hashed
    index = render_site(Loaded(records, sources), out / VIEWER_DIR, capabilities=caps,
                        title=f"{ctx.data['report']['title']}: trajectories")
    return index.relative_to(out).as_posix()


def build_report(root: Path, data: dict[str, Any], profile: str, out: Path, clean: bool = True) -> list[Path]:
    t0 = time.monotonic()
    ctx = Context.build(root, data, profile)
    image = ctx.reader.image_manifest(IMAGE_MANIFEST)
    behaviour = ctx.reader.json(ANALYSIS["behaviour"])
    if not ctx.inputs.viewer:   # declared (the behaviour stage's audit): hashed for provenance; the viewer reads it
        ctx.reader.text(ANALYSIS["turns"])
    efficiency = ctx.reader.json(ANALYSIS["efficiency"])
    storage = ctx.reader.json(ANALYSIS["storage"])
    throughput = ctx.reader.json(ANALYSIS["throughput"])

    learning, check = TE.learning(ctx)
    seeds, over_seeds = replicates_table(ctx)
    tables: list[Table] = [TS.table1(ctx), TE.table2(ctx), TE.table3(ctx), TA.table4(ctx, behaviour), TS.table5(ctx),
                           TE.table6(ctx), TE.table7(ctx), TA.table8(ctx, behaviour), TA.table9(ctx, behaviour),
                           TA.table10(ctx, efficiency), TA.table11(ctx, efficiency, throughput),
                           TA.table12(ctx, storage), TS.table13(ctx), TS.table14(ctx), learning, seeds]

    if clean and out.exists():
        for sub in ("tables", "figures"):
            shutil.rmtree(out / sub, ignore_errors=True)
        if not ctx.inputs.viewer and (out / VIEWER_DIR / MARKER).is_file():   # a viewer of an earlier run
            shutil.rmtree(out / VIEWER_DIR)
    written: list[Path] = []
    at("report: tables")
    for t in tables:
        written += write_table(t, out / "tables")

    fig_dir = out / "figures"
    grid, models, domains, files = _figure1_grid(ctx)
    at("report: figure 1")
    figs = [F.figure1(grid, models, domains, DOMAIN_TITLES, fig_dir, files, ctx.fmt.min_n)]
    at("report: figure 2")
    figs.append(F.figure2(TA.figure2_frame(behaviour), DOMAIN_TITLES, fig_dir, [ANALYSIS["behaviour"]]))
    runs: dict[str, list[dict[str, str]]] = {}
    run_files: list[str] = []
    for run in ctx.inputs.runs:
        m_rel, csv_rel = ctx.inputs.run_files(run)
        ctx.reader.json(m_rel)
        runs[run] = ctx.reader.csv(csv_rel)
        run_files += [m_rel, csv_rel]
    at("report: training curves")
    figs.append(F.training_curves(runs, fig_dir, run_files,
                                  waiting="waits for training: jobs.grpo_data is empty and llm-rl is not evaluated "
                                          "(stages grpo / llm_rl)" if not ctx.inputs.runs else ""))
    for f in figs:
        written += f.files

    viewer = None
    if ctx.inputs.viewer:
        at("report: trajectory viewer")
        viewer = _viewer(ctx, out)
        written.append(out / viewer)
    else:   # the stage declares the folder: present, saying why it holds no pages
        (out / VIEWER_DIR).mkdir(parents=True, exist_ok=True)
        note = out / VIEWER_DIR / "README.md"
        note.write_text("The trajectory viewer is off (report.trajectories: false): no episode pages here.\n")
        written.append(note)
    at("report: index")
    timings = _timings(ctx)
    shares = _stage_shares(timings)
    sections = {s: hash_obj(data.get(s)) for s in SECTIONS if s in data}
    git = git_state(root)
    written += write_index(out, title=str(data["report"]["title"]), profile=profile, git=git, image_manifest=image,
                           tables=tables, figures=figs, hashes=dict(ctx.reader.read), section_hashes=sections,
                           params_hash=hash_obj({s: data.get(s) for s in SECTIONS}), timings=timings,
                           extra={"learning_check": check, "learning_check_seeds": over_seeds, "report_s": round(time.monotonic() - t0, 2),
                                  "stage_time_shares": shares,
                                  "min_n": ctx.fmt.min_n, "paper_version": ctx.paper_version,
                                  "paper_identities": {k: {"paper_model": v.paper_model, "training": v.training,
                                                           "how": v.how} for k, v in ctx.identities.items()}},
                           viewer=viewer)
    return written

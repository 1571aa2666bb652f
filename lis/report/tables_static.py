"""Tables that are not measurements: the design comparisons (Tables 1 and 5, from
data/reference/design_tables.yaml) and the appendix tables generated from params: sampling settings
per evaluated model (Table 13) and the benchmarks (Table 14, with the items each job scored)."""
from __future__ import annotations

from lis.errors import LisError
from lis.report.cells import DASH
from lis.report.context import DOMAIN_TITLES, Context
from lis.report.inputs import REFERENCE
from lis.report.tables import Table

SAMPLING_KEYS = ("temperature", "top_p", "top_k", "max_tokens")


def _design(ctx: Context, key: str, tid: str, number: str) -> Table:
    data = ctx.reader.yaml(REFERENCE["design"]) or {}
    spec = data.get(key)
    if not isinstance(spec, dict) or not isinstance(spec.get("rows"), list):
        raise LisError(f"{REFERENCE['design']} has no {key}.rows", "restore data/reference/design_tables.yaml from git")
    keys = list(spec["columns"])
    titles = spec.get("column_titles") or {}
    cols = ["", *(titles.get(k, k) for k in keys)]
    rows = [[str(r.get("aspect", "")), *(str(r.get(k, DASH)) for k in keys)] for r in spec["rows"]]
    recs = [{"aspect": r.get("aspect"), **{k: r.get(k) for k in keys}} for r in spec["rows"]]
    t = Table(tid, number, spec.get("title", ""), cols, rows, recs, inputs=[REFERENCE["design"]],
              paper=f"Source: {spec.get('confidence', '')} (data/reference/design_tables.yaml; PROVENANCE.md).")
    if spec.get("caption"):
        t.notes = [f"Caption: {spec['caption']}"]
    return t


def table1(ctx: Context) -> Table:
    return _design(ctx, "table1", "table1_design", "Table 1")


def table5(ctx: Context) -> Table:
    return _design(ctx, "table5", "table5_rl_paradigms", "Table 5")


def table13(ctx: Context) -> Table:
    models = ctx.data.get("models", {})
    cols = ["Model", "Backend", "Weights / endpoint model", *SAMPLING_KEYS, "Other"]
    rows, recs = [], []
    for name in ctx.inputs.models:
        ctx.require_model_entry(name, "jobs.models")
        e = models[name]
        s = dict(e.get("sampling") or {})
        other = ", ".join(f"{k}={v}" for k, v in s.items() if k not in SAMPLING_KEYS)
        rows.append([name, str(e.get("backend", "")), str(e.get("model") or e.get("path") or ""),
                     *(DASH if s.get(k) is None else str(s[k]) for k in SAMPLING_KEYS), other or DASH])
        recs.append({"model": name, "backend": e.get("backend"), "weights": e.get("model") or e.get("path"),
                     **{k: s.get(k) for k in SAMPLING_KEYS}, "other": other})
    t = Table("table13_sampling", "Table 13 (appendix)", "Sampling settings of every evaluated model (params models)",
              cols, rows, recs, sections=["models", "jobs"],
              paper="Paper: its appendix lists the same kind of settings for its models; the values here are ours, "
                    "from params.yaml (merged with the profile overlay).")
    return t


def table14(ctx: Context) -> Table:
    doms = (ctx.data.get("tasks") or {}).get("domains") or {}
    cols = ["Domain", "Source", "Dataset", "Revision", "Limit", "Items scored (per job)"]
    rows, recs = [], []
    for d in ctx.inputs.domains:
        spec = doms.get(d) or {}
        ns = []
        for m in ctx.inputs.models:
            for mode in ("vanilla", "sandbox"):
                met = ctx.metrics(m, d, mode)
                if met is not None:
                    ns.append(met.get("items"))
        ns = [n for n in ns if n is not None]
        items = DASH if not ns else (str(ns[0]) if min(ns) == max(ns) else f"{min(ns)}–{max(ns)}")
        dataset = spec.get("dataset")
        if dataset == "paper":
            dataset = f"paper ({(ctx.data.get('tasks') or {}).get('bench_dataset', '')})"
        rows.append([DOMAIN_TITLES.get(d, d), str(spec.get("source", DASH)), str(dataset or DASH),
                     str(spec.get("revision") or DASH), str(spec.get("limit") or "all"), items])
        recs.append({"domain": d, **{k: spec.get(k) for k in ("source", "dataset", "revision", "limit", "seed")},
                     "items_min": min(ns) if ns else None, "items_max": max(ns) if ns else None})
    files = [f for d in ctx.inputs.domains for m in ctx.inputs.models for mode in ("vanilla", "sandbox")
             for f in ctx.job_files(m, d, mode)]
    return Table("table14_benchmarks", "Table 14 (appendix)", "Benchmarks evaluated (params tasks, jobs.domains)",
                 cols, rows, recs, inputs=files, sections=["tasks", "jobs"],
                 paper="Paper: the same six benchmark domains (its appendix); the items here are what each job scored.")

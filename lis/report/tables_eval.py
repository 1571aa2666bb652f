"""Accuracy tables from the evaluation jobs' metrics: Tables 2, 3, 6 and 7 and the learning check. The
paper's number goes beside ours only where :mod:`lis.report.paper_identity` says the same model and
training ran.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.report.cells import DASH, difference, linked, num, paper_value, signed_pct
from lis.report.context import DOMAIN_TITLES, Context
from lis.report.inputs import LEARNING_DOMAIN
from lis.report.learning_check import learning_check, model_summary, paired, verdict
from lis.report.tables import Table

SECTIONS = ["jobs", "report"]


def _acc(m: dict[str, Any] | None) -> float | None:
    return None if m is None else num(m.get("accuracy"))


def _n(m: dict[str, Any] | None) -> Any:
    return None if m is None else m.get("scored", m.get("n"))


def _acc_cell(ctx: Context, m: dict | None, model: str, domain: str, mode: str, missing: str = DASH) -> Any:
    """An accuracy cell linked to the job's episodes in the trajectory viewer."""
    return linked(ctx.fmt.accuracy(m, missing=missing), ctx.job_href(model, domain, mode) if m is not None else None)


def _delta(ctx: Context, a: dict | None, b: dict | None) -> str:
    """b − a in points, marked when either side rests on too few items."""
    va, vb = _acc(a), _acc(b)
    if va is None or vb is None:
        return DASH
    ns = [x for x in (_n(a), _n(b)) if x is not None]
    return signed_pct(vb - va) + ctx.fmt.mark(min(ns) if ns else None)


def _job_record(prefix: str, m: dict | None) -> dict[str, Any]:
    m = m or {}
    return {f"{prefix}_accuracy": m.get("accuracy"), f"{prefix}_ci95": m.get("ci95"), f"{prefix}_n": _n(m) if m else None,
            f"{prefix}_errors": m.get("errors")}


def _paper_note(ctx: Context, table: str, used: list[str]) -> str:
    if used:
        return ("Paper: the published number (its confidence in brackets; data/reference/paper_numbers.yaml, "
                f"version {ctx.paper_version}) beside ours for {', '.join(used)}; 'ours − paper' in points.")
    return ctx.paper_models_note(table)


def table2(ctx: Context) -> Table:
    domains = ctx.benchmark_domains()
    cols = ["Model", "Domain", "Vanilla", "Sandbox", "Δ (sandbox − vanilla)", "Paper vanilla", "Paper sandbox",
            "Ours − paper (vanilla)", "Ours − paper (sandbox)"]
    rows, recs, used, files = [], [], [], []
    for model in ctx.inputs.models:
        ident = ctx.identity(model)
        same = ident if ident is not None and ident.training == "base" else None
        for d in domains:
            v, s = ctx.metrics(model, d, "vanilla"), ctx.metrics(model, d, "sandbox")
            files += ctx.job_files(model, d, "vanilla") + ctx.job_files(model, d, "sandbox")
            pv = ctx.paper("table2", model=same.paper_model, domain=d, mode="vanilla") if same else None
            ps = ctx.paper("table2", model=same.paper_model, domain=d, mode="sandbox") if same else None
            if same and (pv or ps) and model not in used:
                used.append(f"{model} (= {same.name})")
            rows.append([model, DOMAIN_TITLES.get(d, d), _acc_cell(ctx, v, model, d, "vanilla"),
                         _acc_cell(ctx, s, model, d, "sandbox"), _delta(ctx, v, s), paper_value(pv), paper_value(ps), difference(_acc(v), pv), difference(_acc(s), ps)])
            acc_v, acc_s = _acc(v), _acc(s)
            recs.append({"model": model, "domain": d, **_job_record("vanilla", v), **_job_record("sandbox", s),
                         "delta": None if acc_v is None or acc_s is None else round(acc_s - acc_v, 4),
                         "paper_model": same.paper_model if same else None,
                         "paper_vanilla": pv.value if pv and pv.found else None,
                         "paper_sandbox": ps.value if ps and ps.found else None})
    t = Table("table2_main", "Table 2", "Vanilla LLM vs LLM-in-Sandbox: accuracy (%) per model and domain",
              cols, rows, recs, inputs=files, sections=SECTIONS, paper=_paper_note(ctx, "table2", used))
    t.notes = ["Cells: accuracy [95% bootstrap interval over items] · n scored episodes · errors (infrastructure "
               "failures and unscorable answers, left out of the accuracy).", ctx.fmt.dagger_note()]
    if not domains:
        t.waiting = "waits for a benchmark domain in jobs.domains (math, physics, chem, biomed, long_context, instruct_follow)"
    return t


def table3(ctx: Context) -> Table:
    models = [m for m in ctx.inputs.models if ctx.inputs.has_job(m, "long_context", "sandbox")]
    cols = ["Model", "Vanilla (documents in prompt, no tools)", "Sandbox, documents in prompt",
            "Sandbox, documents as files", "Δ (files − prompt)", "Paper: in prompt", "Paper: as files",
            "Ours − paper (files)"]
    rows, recs, used, files = [], [], [], []
    for model in models:
        ident = ctx.identity(model)
        same = ident if ident is not None and ident.training == "base" else None
        jobs = {mode: ctx.metrics(model, "long_context", mode) for mode in ("vanilla", "sandbox_inline", "sandbox")}
        for mode in jobs:
            files += ctx.job_files(model, "long_context", mode)
        pi = ctx.paper("table3", model=same.paper_model, domain="long_context", mode="sandbox_inline") if same else None
        pf = ctx.paper("table3", model=same.paper_model, domain="long_context", mode="sandbox") if same else None
        if same and (pi or pf):
            used.append(f"{model} (= {same.name})")
        inline = jobs["sandbox_inline"]
        rows.append([model, _acc_cell(ctx, jobs["vanilla"], model, "long_context", "vanilla"),
                     _acc_cell(ctx, inline, model, "long_context", "sandbox_inline",
                               missing="not run (add to jobs.long_context_ablation)"),
                     _acc_cell(ctx, jobs["sandbox"], model, "long_context", "sandbox"), _delta(ctx, inline, jobs["sandbox"]),
                     paper_value(pi), paper_value(pf), difference(_acc(jobs["sandbox"]), pf)])
        recs.append({"model": model, **_job_record("vanilla", jobs["vanilla"]),
                     **_job_record("sandbox_inline", inline), **_job_record("sandbox_files", jobs["sandbox"]),
                     "paper_inline": pi.value if pi and pi.found else None,
                     "paper_files": pf.value if pf and pf.found else None})
    t = Table("table3_long_context", "Table 3", "Long context: documents in the prompt vs as files in the sandbox "
              "(accuracy, %)", cols, rows, recs, inputs=files, sections=SECTIONS,
              paper=_paper_note(ctx, "table3", used))
    t.notes = ["Cells: accuracy [95% interval] · n · errors.", ctx.fmt.dagger_note()]
    if not models:
        t.waiting = "waits for long_context in jobs.domains (and a model in jobs.long_context_ablation)"
    return t


def _trained_rows(ctx: Context) -> list[str]:
    """The evaluated models of the RL comparison, in the paper's order: the start, LLM-RL, sandbox RL."""
    order = ["base", "sft", "llm-rl", *(f"grpo-{v}" for v in ctx.data["jobs"].get("grpo_data", []))]
    return [m for m in order if m in ctx.inputs.models]


def start_cell(ctx: Context, model: str) -> tuple[str, dict[str, Any]]:
    """Table 6's start cell of an RL row: the model it started from and the start's score on the training
    tasks (the run's step-1 training reward, before any update); SFT / base rows name their own start."""
    start = start_of(ctx, model)
    rec: dict[str, Any] = {"start": start, "start_train_reward": None, "train_mode": trained_in(model)}
    if model in ctx.inputs.runs:
        m_rel, csv_rel = ctx.inputs.run_files(model)
        rows = ctx.reader.csv(csv_rel)
        if rows and rows[0].get("reward_mean") not in (None, ""):
            rec["start_train_reward"] = float(rows[0]["reward_mean"])
    if start is None:
        return DASH, rec
    if rec["start_train_reward"] is None:
        return start, rec
    return f"{start} (training reward at step 1, {rec['train_mode']}: {rec['start_train_reward']:.3f})", rec


def table6(ctx: Context) -> Table:
    models = _trained_rows(ctx)
    domains = ctx.benchmark_domains()
    cols = ["Model", "Start", "Domain", "Vanilla", "Sandbox", "Paper vanilla", "Paper sandbox", "Ours − paper (sandbox)"]
    rows, recs, used, files = [], [], [], []
    rl = [m for m in models if m == "llm-rl" or m.startswith("grpo-")]
    for model in models if rl else []:
        ident = ctx.identity(model)
        start, start_rec = start_cell(ctx, model)
        for d in domains:
            v, s = ctx.metrics(model, d, "vanilla"), ctx.metrics(model, d, "sandbox")
            files += ctx.job_files(model, d, "vanilla") + ctx.job_files(model, d, "sandbox")
            keys = dict(model=ident.paper_model, training=ident.training, domain=d) if ident else None
            pv = ctx.paper("table6", mode="vanilla", **keys) if keys else None
            ps = ctx.paper("table6", mode="sandbox", **keys) if keys else None
            if ident and (pv or ps) and model not in used:
                used.append(model)
            rows.append([model, start, DOMAIN_TITLES.get(d, d), _acc_cell(ctx, v, model, d, "vanilla"),
                         _acc_cell(ctx, s, model, d, "sandbox"), paper_value(pv), paper_value(ps),
                         difference(_acc(s), ps)])
            recs.append({"model": model, **start_rec, "domain": d, **_job_record("vanilla", v),
                         **_job_record("sandbox", s)})
    t = Table("table6_rl", "Table 6", "RL results: the start model, LLM-RL and LLM-in-Sandbox-RL in vanilla and "
              "sandbox mode (accuracy, %)", cols, rows, recs, inputs=files, sections=SECTIONS + ["grpo"],
              paper=_paper_note(ctx, "table6", used))
    t.notes = ["Cells: accuracy [95% interval] · n · errors.",
               "Start: the model each row was trained from; for an RL row, also the start's score on the training "
               "tasks in that run's mode (its training reward at step 1: the start policy before any update). The "
               "paper starts both RL runs from the same instruct model.", ctx.fmt.dagger_note()]
    if not rl:
        t.waiting = ("waits for training: no trained RL model is evaluated (stages grpo / llm_rl; add grpo-<variant> "
                     "and llm-rl to jobs.models)")
    return t


def table7(ctx: Context) -> Table:
    variants = [v for v in ctx.data["jobs"].get("grpo_data", []) if f"grpo-{v}" in ctx.inputs.models]
    domains = ctx.benchmark_domains()
    cols = ["Training data", "Model"] + [f"{DOMAIN_TITLES.get(d, d)} ({mode})" for d in domains for mode in ("vanilla", "sandbox")]
    rows, recs, files = [], [], []
    if len(variants) >= 2:
        for v in variants:
            model = f"grpo-{v}"
            row: list[Any] = [v, model]
            rec: dict[str, Any] = {"training_data": v, "model": model}
            for d in domains:
                for mode in ("vanilla", "sandbox"):
                    m = ctx.metrics(model, d, mode)
                    files += ctx.job_files(model, d, mode)
                    row.append(_acc_cell(ctx, m, model, d, mode))
                    rec.update(_job_record(f"{d}_{mode}", m))
            rows.append(row)
            recs.append(rec)
    t = Table("table7_data_ablation", "Table 7", "Training-data ablation: GRPO on each data variant (accuracy, %)",
              cols, rows, recs, inputs=files, sections=SECTIONS + ["grpo"],
              paper="Paper: the published ablation is of Qwen3-4B-Instruct-2507 (data/reference/paper_numbers.yaml "
                    "table7); no trained model here is that model, so no number goes beside ours.")
    t.notes = ["Cells: accuracy [95% interval] · n · errors.", ctx.fmt.dagger_note()]
    if len(variants) < 2:
        have = ", ".join(f"grpo-{v}" for v in variants) or "none"
        t.waiting = (f"waits for at least two GRPO data variants evaluated (evaluated: {have}; set jobs.grpo_data to "
                     "e.g. [files, prompt, math] and add grpo-<variant> to jobs.models)")
    return t


def start_of(ctx: Context, model: str) -> str | None:
    """The model a trained model started from, from its manifest (GRPO and LLM-RL: ``init``; SFT:
    ``base``); None for a model not trained from another (the base, an external model)."""
    try:
        m = ctx.reader.model_manifest(model)
    except LisError:
        return None
    where = m.get("init") if m.get("kind") == "grpo" else (m.get("base") if m.get("kind") == "sft" else None)
    return Path(where).name if where else None


def trained_in(model: str) -> str | None:
    """The mode an RL model trained in (LLM-RL: vanilla, GRPO: sandbox); None for any other model."""
    return "vanilla" if model == "llm-rl" else ("sandbox" if model.startswith("grpo-") else None)


def learning(ctx: Context) -> tuple[Table, dict[str, Any] | None]:
    """The learning check table and its raw result (for index.json): every model on the held-out context
    tasks in both modes; each RL model against its start, paired by task, in the mode it trained in."""
    jobs = ctx.inputs.learning_jobs()
    variants = ctx.data["jobs"].get("grpo_data", [])
    treatment, control = (f"grpo-{variants[0]}" if variants else "grpo-files"), "sft"
    cols = ["Model", "Start", "Mode", "Mean reward (held-out)", "Start's mean reward (same mode)",
            "Δ vs start (paired by task)", "Wins / losses / ties", "p (sign flip)"]
    have = {j.model for j in jobs if j.mode == "sandbox"}
    t = Table("learning_check", "Learning check", f"Held-out context tasks ({LEARNING_DOMAIN}): each trained model "
              f"against its start, paired by task, in the mode it trained in ({treatment}: sandbox; llm-rl: vanilla)",
              cols, [], [], sections=SECTIONS + ["grpo"],
              paper="Paper: no published number (our own check that training learned something).")
    if not (treatment in have and control in have):
        missing = [m for m in (treatment, control) if m not in have]
        t.waiting = (f"waits for {', '.join(missing)} evaluated on {LEARNING_DOMAIN} (jobs.models and jobs.domains; "
                     "the training stages grpo and sft)")
        return t, None
    recs = {(j.model, j.mode): ctx.records(j.model, j.domain, j.mode) for j in jobs}
    t.inputs = [j.trajectories for j in jobs]
    check = learning_check({m: r for (m, mode), r in recs.items() if mode == "sandbox"}, treatment=treatment,
                           control=control)
    check["starts"], check["comparisons"] = {}, {}
    models = list(dict.fromkeys(j.model for j in jobs))
    for model in models:
        start = start_of(ctx, model)
        check["starts"][model] = start
        trains = trained_in(model)
        for mode in ("sandbox", "vanilla"):
            if (model, mode) not in recs:
                continue
            summ = model_summary(recs[(model, mode)])
            base = (start, mode) in recs and start is not None
            comp = paired(recs[(model, mode)], recs[(start, mode)]) if base and mode == trains else None
            start_summ = model_summary(recs[(start, mode)]) if base else None
            if comp is not None:
                check["comparisons"][model] = {"start": start, "mode": mode, **comp,
                                               "verdict": verdict({"treatment": model, "control": start,
                                                                   "comparison": comp})}
            t.rows.append([model, start or DASH, mode, ctx.fmt.accuracy(summ),
                           ctx.fmt.accuracy(start_summ) if start_summ else DASH,
                           ctx.fmt.delta(comp) if comp else DASH,
                           f"{comp['wins']} / {comp['losses']} / {comp['ties']}" if comp else DASH,
                           (DASH if comp["p_value"] is None else f"{comp['p_value']:.3g}") if comp else DASH])
            t.records.append({"model": model, "start": start, "mode": mode,
                              **{k: summ.get(k) for k in ("n", "scored", "errors", "accuracy", "ci95")},
                              "start_accuracy": start_summ["accuracy"] if start_summ else None,
                              **({f"paired_{k}": comp.get(k) for k in ("n_pairs", "mean_difference", "ci95", "wins",
                                                                        "losses", "ties", "p_value")} if comp else {})})
    t.notes = [f"Verdict: {c['verdict']} ({c['mode']} mode)." for c in check["comparisons"].values()]
    t.notes += ["Start: the model a row's model was trained from (its manifest); the start's mean reward is in the "
                "row's mode. Mean reward [95% bootstrap interval over tasks] · n scored · errors; Δ: mean paired "
                "difference [95% paired bootstrap] · pairs, in the mode the model trained in.", ctx.fmt.dagger_note()]
    return t, check

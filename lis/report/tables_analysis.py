"""Tables from the analysis stages: behaviour (Tables 4, 8, 9), efficiency (Tables 10, 11) and storage
(Table 12). The numbers are the analysis stages'; this module only shows them.
"""
from __future__ import annotations

from typing import Any

from lis.report.cells import DASH, paper_value, plain
from lis.report.context import DOMAIN_TITLES, Context
from lis.report.inputs import ANALYSIS
from lis.report.tables import Table

CAPS = ("external", "file", "compute")
CAP_TITLES = {"external": "External resources", "file": "File management", "compute": "Computation"}
PAPER_METRIC = {"external": "external", "file": "file", "compute": "computation", "avg_turns": "avg_turns"}


def _usage_cells(ctx: Context, r: dict | None, n: Any) -> list[str]:
    if not r:
        return [DASH] * 4
    u = r.get("usage") or {}
    return [ctx.fmt.rate(u.get(c), n) for c in CAPS] + [ctx.fmt.mean(r.get("avg_turns"), n, mark=False)]


def _usage_record(prefix: str, r: dict | None) -> dict[str, Any]:
    u = (r or {}).get("usage") or {}
    out = {f"{prefix}{c}": (u.get(c) or {}).get("value") for c in CAPS}
    out.update({f"{prefix}{c}_ci95": (u.get(c) or {}).get("ci95") for c in CAPS})
    out[f"{prefix}avg_turns"] = ((r or {}).get("avg_turns") or {}).get("value")
    return out


def _episodes(members: list[dict] | None) -> int | None:
    vals = [m.get("episodes") for m in members or [] if isinstance(m, dict) and m.get("episodes") is not None]
    return sum(vals) if vals else None


def table4(ctx: Context, b: dict) -> Table:
    cols = ["Group", "Models", *(CAP_TITLES[c] + " (% of turns)" for c in CAPS), "Avg turns"]
    rows, recs = [], []
    for r in b.get("table4") or []:
        n = _episodes(r.get("members"))
        rows.append([r["group"], ", ".join(r.get("models") or []) + (f" (missing: {', '.join(r['missing'])})"
                                                                    if r.get("missing") else ""),
                     *_usage_cells(ctx, r, n)])
        recs.append({"group": r["group"], "models": " ".join(r.get("models") or []), "episodes": n,
                     **_usage_record("", r)})
    t = Table("table4_capability_groups", "Table 4", "Sandbox-capability usage and average turns by model group "
              "(sandbox mode)", cols, rows, recs, inputs=[ANALYSIS["behaviour"]], sections=["behaviour", "jobs"],
              paper="Paper: its groups are of its own models (strong models vs Qwen3-4B); ours are the params' "
                    "behaviour.groups, so no number goes beside ours (data/reference/paper_numbers.yaml table4).")
    t.notes = ["Cells: usage rate = turns using the capability / all turns [95% bootstrap interval] · n episodes. "
               "Definitions: docs/behaviour-definitions.md."]
    if not rows:
        t.waiting = "waits for behaviour.groups in params (e.g. {strong: [a, b], weak: [c]}) naming evaluated models"
    return t


def table8(ctx: Context, b: dict) -> Table:
    cols = ["Pair", "Model", *(CAP_TITLES[c] for c in CAPS), "Avg turns", "Paper"]
    rows, recs, missing = [], [], []
    for r in b.get("table8") or []:
        if r.get("missing"):
            missing.append(f"{r['label']} (no episodes of {', '.join(r['missing'])})")
            continue
        for side in ("before", "after"):
            model = r[f"{side}_model"]
            ident = ctx.identity(model)
            ref = [ctx.paper("table8", model=ident.paper_model, training=ident.training, metric=PAPER_METRIC[k])
                   for k in (*CAPS, "avg_turns")] if ident else []
            shown = " / ".join(paper_value(x) for x in ref) if any(ref) else DASH
            n = (r.get(side) or {}).get("episodes")
            rows.append([r["label"], f"{side}: {model}", *_usage_cells(ctx, r.get(side), n), shown])
            recs.append({"label": r["label"], "side": side, "model": model, "episodes": n,
                         **_usage_record("", r.get(side))})
        d = r.get("delta") or {}
        du = d.get("usage") or {}
        rows.append([r["label"], "Δ (after − before)", *(("%+.1f" % (100 * du[c]["value"])) if (du.get(c) or {}).get("value")
                                                           is not None else DASH for c in CAPS),
                     plain((d.get("avg_turns") or {}).get("value"), 2), DASH])
    t = Table("table8_capability_rl", "Table 8", "Sandbox-capability usage before and after RL (sandbox mode, % of turns)",
              cols, rows, recs, inputs=[ANALYSIS["behaviour"]], sections=["behaviour", "jobs"],
              paper="Paper: shown as external / file / computation / turns where the same model and training ran "
                    "(data/reference/paper_numbers.yaml table8).")
    t.notes = ["Cells: usage rate [95% interval] · n episodes; Δ in points."]
    if missing:
        t.notes.append("Waiting: " + "; ".join(missing) + ".")
    if not rows:
        t.waiting = ("waits for training: set behaviour.rl_pairs to (before, after) models that are evaluated "
                     "(the RL stages grpo / llm_rl)" + (f"; configured pairs lack episodes: {'; '.join(missing)}"
                                                        if missing else ""))
    return t


def table9(ctx: Context, b: dict) -> Table:
    t9 = b.get("table9") or {}
    ids = t9.get("rows") or []
    cols = ["Model", "Responses", *ids]
    rows, recs = [], []
    for m in t9.get("models") or []:
        per = m.get("per_response") or {}
        n = m.get("responses")
        rows.append([m["model"], f"{n}{ctx.fmt.mark(n)}", *(ctx.fmt.mean(per.get(i), mark=False, digits=2) for i in ids)])
        recs.append({"model": m["model"], "responses": n, **{i: (per.get(i) or {}).get("value") for i in ids}})
    t = Table("table9_reasoning", "Table 9", "Reasoning patterns per vanilla-mode response (verification phrases and "
              "structure markers)", cols, rows, recs, inputs=[ANALYSIS["behaviour"]], sections=["behaviour", "jobs"],
              paper="Paper: its counts are of Qwen3-4B-Instruct-2507 before and after sandbox RL, normalisation not "
                    "stated (data/reference/paper_numbers.yaml table9); none of our models is that model.")
    t.notes = ["Cells: mean count per response [95% interval]. Definitions: docs/behaviour-definitions.md.", ctx.fmt.dagger_note()]
    if not rows:
        t.waiting = "waits for vanilla-mode episodes (behaviour.modes must include vanilla)"
    return t


def _tokens(ctx: Context, cell: dict | None) -> str:
    if not cell:
        return DASH
    tot = cell.get("total") or {}
    parts = " (prompt {} / model {} / env {})".format(*(plain(cell.get(k), 0) for k in ("prompt", "model", "env")))
    return ctx.fmt.mean(tot, tot.get("n"), digits=0) + parts


def table10(ctx: Context, e: dict) -> Table:
    cols = ["Model", "Domain", "Vanilla tokens / episode", "Sandbox tokens / episode", "Sandbox / vanilla", "Paper"]
    rows, recs = [], []
    for r in e.get("table10") or []:
        ident = ctx.identity(r["model"])
        ref = None
        if ident and ident.training == "base":
            ref = (ctx.paper("table10", model=ident.paper_model, domain=r["domain"], metric="tokens_sandbox")
                   or ctx.paper("table10", model=ident.paper_model, domain="all", metric="ratio_sandbox_to_vanilla"))
        ratio = r.get("ratio") or {}
        rows.append([r["model"], DOMAIN_TITLES.get(r["domain"], r["domain"]), _tokens(ctx, r.get("vanilla")),
                     _tokens(ctx, r.get("sandbox")), ctx.fmt.mean(ratio, digits=2, mark=False), paper_value(ref, digits=2)])
        v, s = r.get("vanilla") or {}, r.get("sandbox") or {}
        recs.append({"model": r["model"], "domain": r["domain"],
                     "vanilla_total": (v.get("total") or {}).get("mean"), "vanilla_n": (v.get("total") or {}).get("n"),
                     "sandbox_total": (s.get("total") or {}).get("mean"), "sandbox_n": (s.get("total") or {}).get("n"),
                     "sandbox_prompt": s.get("prompt"), "sandbox_model": s.get("model"), "sandbox_env": s.get("env"),
                     "ratio": ratio.get("value"), "ratio_ci95": ratio.get("ci95")})
    t = Table("table10_tokens", "Table 10", "Tokens per episode, vanilla vs sandbox (prompt, model-generated and "
              "environment-generated)", cols, rows, recs, inputs=[ANALYSIS["efficiency"]],
              sections=["efficiency", "jobs"],
              paper="Paper: its token numbers are of DeepSeek-V3.2, MiniMax-M2, Kimi-K2 and a Qwen model "
                    "(data/reference/paper_numbers.yaml table10); shown only where the same model ran.")
    t.notes = ["Cells: mean tokens per episode [95% cluster bootstrap over tasks] · n episodes (prompt / model / "
               "environment means). Definitions: docs/efficiency.md.", ctx.fmt.dagger_note()]
    if not rows:
        t.waiting = "waits for vanilla and sandbox evaluations (jobs.models × jobs.domains)"
    return t


def table11(ctx: Context, e: dict, tp: dict) -> Table:
    cols = ["Model", "Domain", "Environment tokens (% of total)", "Environment time (% of episode)",
            "LLM time (% of episode)", "Paper env tokens / exec time"]
    rows, recs = [], []
    for r in e.get("table11") or []:
        ident = ctx.identity(r["model"])
        refs = [ctx.paper("table11", model=ident.paper_model, metric=m) for m in ("env_token_share", "exec_time_share")] \
            if ident and ident.training == "base" else []
        cells = [ctx.fmt.mean(r.get(k), scale=100, mark=k == "env_token_share") for k in
                 ("env_token_share", "env_time_share", "llm_time_share")]
        rows.append([r["model"], DOMAIN_TITLES.get(r["domain"], r["domain"]), *cells,
                     " / ".join(paper_value(x) for x in refs) if any(refs) else DASH])
        recs.append({"model": r["model"], "domain": r["domain"],
                     **{k: (r.get(k) or {}).get("value") for k in ("env_token_share", "env_time_share", "llm_time_share")},
                     "n": (r.get("env_token_share") or {}).get("n")})
    summ = (tp or {}).get("summary") or {}
    modes = summ.get("modes") or {}
    model = ((tp or {}).get("model") or {}).get("name") or ((tp or {}).get("settings") or {}).get("model")
    conc = ((tp or {}).get("settings") or {}).get("concurrency")
    for mode, m in modes.items():
        q = m.get("qpm") or {}
        rows.append([f"{model} (throughput)", f"QPM {mode}", ctx.fmt.mean(q, q.get("n"), digits=2, mark=False) + " runs",
                     DASH, DASH, DASH])
        recs.append({"model": model, "domain": f"qpm_{mode}", "qpm": q.get("mean"), "qpm_ci95": q.get("ci95"),
                     "n": q.get("n"), "concurrency": conc})
    for key, r in (summ.get("ratios") or {}).items():
        rows.append([f"{model} (throughput)", f"QPM ratio {key}",
                     plain(r.get("geomean"), 2) + (f" [{plain(r['ci95'][0], 2)}, {plain(r['ci95'][1], 2)}]"
                                                   if r.get("ci95") and None not in r["ci95"] else "")
                     + f" · n {r.get('n')}", DASH, DASH, "paper: 0.6× to 2.2× (other models)"])
        recs.append({"model": model, "domain": f"qpm_ratio {key}", "qpm": r.get("geomean"), "qpm_ci95": r.get("ci95"),
                     "n": r.get("n"), "concurrency": conc})
    t = Table("table11_throughput", "Table 11", "Where the time and tokens go: environment token and time shares; "
              "queries per minute", cols, rows, recs, inputs=[ANALYSIS["efficiency"], ANALYSIS["throughput"]],
              sections=["efficiency", "throughput", "jobs"],
              paper="Paper: shares and QPM ratios of DeepSeek-V3.2, MiniMax-M2, Kimi-K2 and Qwen "
                    "(data/reference/paper_numbers.yaml table11); beside ours only where the same model ran.")
    t.notes = [f"Shares: ratio of sums [95% cluster bootstrap over tasks] · n episodes. QPM: mean over runs "
               f"[95% t-interval] at concurrency {conc}; ratio: geometric mean of per-repeat ratios. "
               "Definitions: docs/efficiency.md.", ctx.fmt.dagger_note()]
    if not rows:
        t.waiting = "waits for sandbox evaluations and the throughput stage"
    return t


def table12(ctx: Context, s: dict) -> Table:
    cols = ["What", "Kind", "Size (GB)", "Origin", "Sources / n"]
    rows, recs = [], []
    for i in s.get("images") or []:
        srcs = ", ".join(i.get("sources") or []) or (f"n {i['n']}" if i.get("n") else DASH)
        extra = f" ({i['ratio_to_paper_image']}× the paper's image)" if i.get("ratio_to_paper_image") else ""
        rows.append([i["name"], i.get("kind", ""), plain(i.get("size_gb"), 3) + extra, i.get("origin", ""), srcs])
        recs.append({k: i.get(k) for k in ("name", "kind", "size_gb", "origin", "ratio_to_paper_image")})
    mem = s.get("memory") or {}
    for key, label in (("idle", "Memory per idle sandbox (MB)"), ("busy_peak", "Memory per busy sandbox, peak (MB)"),
                       ("busy_cgroup_peak", "Memory per busy sandbox, cgroup high-water (MB)")):
        m = mem.get(key) or {}
        if not m:
            continue
        ci = m.get("ci95_mb")
        ours = plain(m.get("mb")) + (f" [{plain(ci[0])}, {plain(ci[1])}]" if isinstance(ci, list) and len(ci) == 2 else "")
        rows.append([label, mem.get("backend") or "", f"ours {ours} · n {m.get('n')}", "measured",
                     f"paper {plain(m.get('paper_mb'))} (ratio {plain(m.get('ratio_to_paper'), 2)})"])
        recs.append({"name": key, "kind": "memory_mb", "size_gb": None, "origin": "measured", "mb": m.get("mb"),
                     "n": m.get("n"), "paper_mb": m.get("paper_mb")})
    t = Table("table12_storage", "Table 12", "Storage and memory: one shared image vs task-specific images",
              cols, rows, recs, inputs=[ANALYSIS["storage"]], sections=["sandbox_memory"],
              paper=f"Paper: quoted sizes and memory ({s.get('quoted_confidence') or 'secondary'} sources; "
                    "data/reference/storage_quoted.yaml) beside our measured image and sandboxes.")
    t.notes = [f"{(s.get('paper') or '')}".strip()] if s.get("paper") else []
    return t


def figure2_frame(b: dict) -> list[dict[str, Any]]:
    """Figure 2's data: per domain, usage per capability and average turns (sandbox mode)."""
    out = []
    for r in (b.get("figure2") or {}).get("by_domain") or []:
        u = r.get("usage") or {}
        out.append({"domain": r["domain"], "episodes": r.get("episodes"), "models": " ".join(r.get("models") or []),
                    **{c: (u.get(c) or {}).get("value") for c in CAPS},
                    "avg_turns": (r.get("avg_turns") or {}).get("value")})
    return out


"""The docs' tables of measured numbers, rendered from the results files (`lis bench render`).

    texts = render_docs(docs_dir, records)    # {path: the page with every table rewritten}
    problems = stale(texts)                    # what `lis bench render --check` reports

A page marks each table with ``<!-- bench:NAME -->`` and ``<!-- /bench -->`` lines (NAME one of
:data:`TABLES`); everything between is rewritten from the newest results file that holds the
benchmark without an error, so numbers are never typed into the docs.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from lis.errors import LisError

BLOCK = re.compile(r"^(<!-- bench:(?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)^(<!-- /bench -->)$", re.S | re.M)
OPEN = re.compile(r"^<!-- bench:(\S*) -->$", re.M)  # a marker is a line of its own (prose may name one)
TRACKED = ("make test", "make test-fast", "make paper", "make test-cluster")  # the commands docs/timings.md lists


# -- formatting --------------------------------------------------------------------------------------

def _s(x: float | None) -> str:
    """Seconds as people read them: 0.58 ms, 287 ms, 41 s, 69.6 min."""
    if x is None:
        return "—"
    if x < 1:
        return f"{x * 1000:.3g} ms"
    if x < 120:
        return f"{x:.3g} s" if x < 10 else f"{x:.0f} s"
    return f"{x / 60:.1f} min"


def _ms(d: dict[str, Any] | None, key: str = "median_ms") -> str:
    return "—" if not d or d.get(key) is None else f"{d[key]:.3g} ms"


def _n(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "—"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.{digits}g}"


def _date(record: dict[str, Any]) -> str:
    return record["started"][:16].replace("T", " ") + " UTC"


def _commit(record: dict[str, Any]) -> str:
    c = record.get("commit") or "no git"
    return f"`{c}`" + (" + edits" if record.get("dirty") else "")


def _machine(record: dict[str, Any]) -> str:
    m = record["machine"]
    cpu = re.sub(r"\s+", " ", re.sub(r"\((R|TM)\)|CPU|Processor|\d+-Core", "", str(m.get("cpu", "?")))).strip()
    mem = f", {m['memory_gib']:.0f} GiB" if m.get("memory_gib") else ""
    return f"{cpu}, {m.get('cores', '?')} cores{mem}"


def _load(record: dict[str, Any]) -> str:
    before = record.get("load_avg_before") or [None]
    return "" if before[0] is None else f", load average {before[0]:.1f} at the start"


def source(records: list[dict[str, Any]]) -> str:
    """The line above a table: which results file(s), commit, date, machine."""
    seen, parts = set(), []
    for r in records:
        if r["file"] in seen:
            continue
        seen.add(r["file"])
        parts.append(f"`benchmarks/{r['file']}` ({_commit(r)}, {_date(r)}; {_machine(r)}{_load(r)})")
    return "Measured: " + "; ".join(parts) + "."


def table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(out)


# -- which record ------------------------------------------------------------------------------------

def latest(records: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    """The newest bench record holding benchmark ``name`` without an error."""
    for r in reversed(records):
        entry = r.get("benchmarks", {}).get(name) if r["kind"] == "bench" else None
        if entry is not None and not entry.get("error") and entry.get("numbers") is not None:
            return r
    return None


def _missing(*names: str) -> str:
    return (f"No results file holds {', '.join(names)} yet: run `lis bench all --only {','.join(names)}`, "
            "then `lis bench render`.")


def _failed(record: dict[str, Any], name: str) -> str:
    bad = [c["check"] for c in record["benchmarks"][name].get("checks", []) if not c["ok"]]
    return f"\n\n**Failed checks:** {'; '.join(bad)}." if bad else ""


# -- the tables --------------------------------------------------------------------------------------

def renders(name: str):
    """A table made from the latest record that ran benchmark ``name`` (``_missing`` when none did), with
    the benchmark's failed checks under it."""
    def made(table_of: Callable[[dict[str, Any]], str]) -> Callable[[list[dict[str, Any]]], str]:
        def rendered(records: list[dict[str, Any]]) -> str:
            r = latest(records, name)
            return _missing(name) if r is None else table_of(r) + _failed(r, name)
        return rendered
    return made


def t_timings(records: list[dict[str, Any]]) -> str:
    """The latest wall time of each timed command (and of `lis bench all`)."""
    times: dict[str, dict[str, Any]] = {}
    for r in records:
        if r["kind"] == "time":
            times[r["name"]] = r
    bench = next((r for r in reversed(records) if r["kind"] == "bench" and "ok" in r and not r.get("interrupted")
                  and r.get("only") is None), None)  # a whole run that finished
    rows = []
    for name in [*TRACKED, *sorted(n for n in times if n not in TRACKED)]:
        r = times.get(name)
        if r is None:
            rows.append([f"`{name}`", "not measured yet", "—", "—", "—", "—"])
            continue
        rows.append([f"`{name}`", f"**{_s(r['wall_s'])}**", str(r.get("rc")), _machine(r) + _load(r), _commit(r),
                     _date(r)])
    if bench is not None:
        rows.append(["`lis bench all`", f"**{_s(bench['wall_s'])}**", "0" if bench.get("ok") else "1",
                     _machine(bench) + _load(bench), _commit(bench), _date(bench)])
    return table(["command", "wall time", "exit", "machine", "commit", "date"], rows)


def t_overview(records: list[dict[str, Any]]) -> str:
    """Every benchmark of the newest whole `lis bench all` run (no --only; else the newest run): what it
    measures, its checks, its wall time."""
    benches = [x for x in records if x["kind"] == "bench"]
    r = next((x for x in reversed(benches) if x.get("only") is None and "ok" in x),
             benches[-1] if benches else None)
    if r is None:
        return "No `lis bench all` run recorded yet."
    rows = []
    for name, e in r["benchmarks"].items():
        checks = e.get("checks") or []
        held = "failed to run: " + e["error"] if e.get("error") else \
            f"{sum(c['ok'] for c in checks)} of {len(checks)}" + ("" if e.get("ok") else " (**failed**)")
        load = e.get("load_avg_1m_before")
        rows.append([f"`{name}`", e.get("about", ""), held, _s(e.get("wall_s")), "—" if load is None else f"{load:.1f}"])
    return source([r]) + "\n\n" + table(["benchmark", "what it measures", "checks held", "wall time",
                                          "load average at its start"], rows)


def t_sandbox(records: list[dict[str, Any]]) -> str:
    found = {b: latest(records, f"sandbox-{b}") for b in ("docker", "bwrap")}
    if not any(found.values()):
        return _missing("sandbox-docker", "sandbox-bwrap")
    res = {b: (r["benchmarks"][f"sandbox-{b}"]["numbers"] if r else None) for b, r in found.items()}

    def cell(b: str, fn: Callable[[dict[str, Any]], str]) -> str:
        try:
            return fn(res[b]) if res[b] else "—"
        except (KeyError, TypeError):
            return "—"

    def echo(x):
        return f"{_ms(x['execute_bash_echo'])} ({_ms(x['execute_bash_echo'], 'p90_ms')})"

    def raw(x):
        if "raw_exec_run_echo" not in x:
            return "—"
        return (f"{_ms(x['raw_exec_run_echo'])} ({_ms(x['raw_exec_run_echo'], 'p90_ms')}): "
                f"**{x['speedup_vs_exec_run']:g}× slower**")

    def conc(x):
        c = x["concurrent"]
        return f"{_s(c['wall_s'])}, {c['errors']} errors"

    def mem(x):
        if x.get("idle_memory_mib") is None:
            return "—"
        return f"{x['idle_memory_mib']:.1f} MiB ({x['busy_peak_memory_mib']:.0f} MiB)"

    conc_head = next((f"{x['concurrent']['sandboxes']} concurrent sandboxes × {x['concurrent']['commands_each']} "
                      "commands" for x in res.values() if x), "concurrent sandboxes")
    rows = [["`echo hi` through `execute_bash`, median (p90)", cell("docker", echo), cell("bwrap", echo)],
            ["the same through a raw `exec_run` (the official runtime's way; the baseline)", cell("docker", raw),
             cell("bwrap", raw)],
            ["sandbox start, median", cell("docker", lambda x: _ms(x["start"])), cell("bwrap", lambda x: _ms(x["start"]))],
            ["acquire from a warm pool, median", cell("docker", lambda x: _ms(x["acquire_warm"])),
             cell("bwrap", lambda x: _ms(x["acquire_warm"]))],
            [conc_head, cell("docker", conc), cell("bwrap", conc)],
            ["memory per sandbox, idle (busy peak)", cell("docker", mem), cell("bwrap", mem)]]
    fails = "".join(_failed(r, f"sandbox-{b}") for b, r in found.items() if r)
    return source([r for r in found.values() if r]) + "\n\n" + table(["", "Docker", "bubblewrap"], rows) + fails


@renders("serve")
def t_serve(r: dict[str, Any]) -> str:
    x = r["benchmarks"]["serve"]["numbers"]
    load, single, base = x.get("load", {}), x.get("single", {}), x.get("baseline_in_process") or {}
    bl = base.get("latency") or {}

    def pct(d: dict[str, Any]) -> str:
        return " / ".join(_s(d.get(k)) for k in ("p50_s", "p90_s", "p99_s")) if d else "—"

    sbx = x.get("sandboxes") or {}
    start, wait = sbx.get("start_s") or {}, sbx.get("acquire_wait_s") or {}
    rows = [["one request alone, p50 (p90)", f"{_s(single.get('p50_s'))} ({_s(single.get('p90_s'))})", "—"],
            [f"{x['requests']} requests, {x['concurrent']} at once: p50 / p90 / p99", pct(load), pct(bl)],
            ["throughput", f"{load.get('throughput_rps', 0):.2f} requests/s ({load.get('answered')} in "
                           f"{_s(load.get('wall_s'))})",
             f"{base['throughput_rps']:.2f} episodes/s" if base else "—"],
            ["sandbox start p50 / p99; wait for a sandbox p50 / p99",
             f"{_s(start.get('p50'))} / {_s(start.get('p99'))}; {_s(wait.get('p50'))} / {_s(wait.get('p99'))}", "—"],
            ["lost episodes (not answered with their own answer)", f"{x['lost_episodes']} of {x['requests']} + "
             f"{x.get('sequential', 5)} alone", str(base.get("errors", "—"))],
            ["sandboxes left after the load / after SIGTERM",
             f"{x['sandboxes_left']['after_load']} / {x['sandboxes_left']['after_sigterm']}", "—"]]
    head = ["", "`lis serve`", "baseline: the same episodes via `run_task` in-process"]
    return source([r]) + f" Load average {x.get('load_avg_1m_before')} before, {x.get('load_avg_1m_after')} after.\n\n" \
        + table(head, rows)


@renders("generate")
def t_generate(r: dict[str, Any]) -> str:
    nums = r["benchmarks"]["generate"]["numbers"]
    rows = []
    for c in nums["cases"]:
        pt = c["prompt_tokens"]
        prompts = f"{pt['min']}" if pt["min"] == pt["max"] else f"{pt['min']}–{pt['max']}"
        con = c["concurrent"]
        rows.append([f"{c['model']} ({c['parameters'] / 1e6:.3g} M parameters)",
                     f"{c['case']}; prompts of {prompts} tokens, up to {c['max_new_tokens']:,} new",
                     f"{_n(c['sequential']['tokens_per_s'])} tokens/s",
                     f"{_n(con['tokens_per_s'])} tokens/s", f"**{c['speedup']:g}×**",
                     f"{con['decode_steps']:,} ({con['max_batch']}, {con['prefills'] + con['shared_prefills']})",
                     f"{c['identical_sequences']}/{c['n']}"])
    head = ["model", "sequences", "one after the other", "at once", "speed-up", "decode steps (most rows, prefills)",
            "identical ids"]
    return source([r]) + f" CPU, {nums.get('torch_threads', 1)} torch thread.\n\n" + table(head, rows)


@renders("vllm")
def t_vllm_generate(r: dict[str, Any]) -> str:
    nums = r["benchmarks"]["vllm"]["numbers"]
    rows = [[f"{c['case']}; prompts of {c['prompt_tokens']['min']}–{c['prompt_tokens']['max']} tokens, "
             f"{c['max_new_tokens']} new", f"{_n(c['in_process']['tokens_per_s'])} tokens/s",
             f"{_n(c['vllm']['tokens_per_s'])} tokens/s", f"**{c['vllm_over_in_process']:g}×**"]
            for c in nums["generate"]]
    head = ["sequences at once", "in-process engine", "vLLM (float32)", "vLLM / in-process"]
    return source([r]) + f" {nums['model']}, CPU, {nums.get('torch_threads')} torch threads.\n\n" \
        + table(head, rows)


@renders("vllm")
def t_vllm_mismatch(r: dict[str, Any]) -> str:
    nums = r["benchmarks"]["vllm"]["numbers"]
    rows = []
    for m in nums["mismatch"]:
        smp = m["sampling"]
        rows.append([m["vllm_dtype"], f"{m['settings']} (T {smp['temperature']:g}, top-p {smp['top_p']:g}, "
                     f"top-k {smp['top_k']})", f"{m['sequences']} × {m['tokens'] // m['sequences']}",
                     f"{m['token_abs_diff_mean']:.3g}", f"{m['token_abs_diff_max']:.3g}",
                     f"{m['seq_log_ratio_mean']:.3g} [{m['seq_log_ratio_min']:.3g}, {m['seq_log_ratio_max']:.3g}]",
                     f"{m['seq_ratio_min']:.3g} – {m['seq_ratio_max']:.3g}"])
    head = ["vLLM dtype", "sampling", "sequences × tokens", "mean abs diff per token", "max abs diff",
            "sequence log-ratio mean [min, max]", "sequence ratio"]
    return source([r]) + f" {nums['model']}; the trainer recomputes in float32, log_softmax(logits / T).\n\n" \
        + table(head, rows)


@renders("rollout")
def t_rollout(r: dict[str, Any]) -> str:
    x = r["benchmarks"]["rollout"]["numbers"]
    short = x.get("grpo_overrides") or {}
    turns = f", {short['max_turns']} turns of ≤ {short['max_tokens_per_turn']} tokens" if short else ""
    rows = [[f"{x['episodes']} episodes of `{x['task']}` ({x.get('model', '?')}{turns})", _s(x["sequential_s"]),
             _s(x["longest_alone_s"]), _s(x["group_s"]), f"**{x['group_over_longest_alone']:g}×**",
             f"{x['speedup_vs_sequential']:g}×", f"{_s(x['group_with_prefix_cache_s'])} "
             f"({_n(x.get('prefill_tokens_with_prefix_cache'))} vs {_n(x.get('prefill_tokens'))} prefill tokens)"]]
    head = ["group", "one after the other", "longest alone", "group at once", "group / longest alone",
            "speed-up", "group with the prefix cache"]
    return source([r]) + "\n\n" + table(head, rows)


@renders("determinism")
def t_determinism(r: dict[str, Any]) -> str:
    x = r["benchmarks"]["determinism"]["numbers"]
    ratio = x["ratio_deterministic_over_default"]
    rep = x["repeat_of_step_1"]
    ci = f" [{ratio['ci95'][0]:g}, {ratio['ci95'][1]:g}]" if ratio.get("ci95") else ""
    rows = [["rollout s per step, mean", _s(x["mean_rollout_s"]["default"]), _s(x["mean_rollout_s"]["deterministic"])],
            ["step 1 run twice more: the same episodes", str(rep["default"]["identical"]).lower(),
             str(rep["deterministic"]["identical"]).lower()]]
    return source([r]) + f" {x['steps']} steps of {x['episodes_per_step']} episodes ({x.get('model', '?')}); " \
        f"ratio deterministic / default **{ratio['geomean']:g}×{ci}**.\n\n" \
        + table(["", "default mode", "deterministic mode"], rows)


@renders("startup")
def t_startup(r: dict[str, Any]) -> str:
    x = r["benchmarks"]["startup"]["numbers"]
    rows = [["`lis.params` load (params.yaml, overlay, schema; validated)", f"{x['params_load_ms']:.3g} ms",
             f"{x['params_load_pure_python_ms']:.3g} ms", f"**{x['params_load_speedup']:g}×**"],
            ["the same files again, from the cache", f"{x['params_load_cached_ms']:.2g} ms", "—", "—"],
            ["`lis --help` as a process, median of 5", _s(x["lis_help_process_s"]["median"]), "—", "—"]]
    return source([r]) + "\n\n" + table(["", "libyaml (`CSafeLoader`)", "pure-Python loader (baseline)", "ratio"],
                                        rows)


@renders("plan")
def t_plan(r: dict[str, Any]) -> str:
    rows = r["benchmarks"]["plan"]["numbers"]["rows"]
    ratios = [x["ratio"] for x in rows]
    body = []
    for x in rows:
        toks = (f"{x['rows']}x{x['prompt'] + x['completion']}" if x["stage"] == "grpo"
                else f"{x['rows']}x{x['tokens']} ({x['rows'] * x['labelled']} labelled)")
        body.append([x["model"], x["stage"], toks, "on" if x["checkpointing"] else "off",
                     "yes" if x.get("padded") else "no", f"{x['estimate_gb']:.3f}", f"{x['measured_gb']:.3f}",
                     f"{x['ratio']:.2f}", f"{x['steps_s']:.1f}"])
    head = ["model", "stage", "tokens", "checkpointing", "padded", "estimate GB", "measured GB", "ratio", "step s"]
    return source([r]) + f" Ratios {min(ratios):.2f}–{max(ratios):.2f} (GB = 10^9 bytes; step s: the two steps' " \
        "wall time).\n\n" + table(head, body)


@renders("rehearsal")
def t_rehearsal(r: dict[str, Any]) -> str:
    e = r["benchmarks"]["rehearsal"]
    x = e["numbers"]
    rows = [[f"sft {k}", str(v["steps"]), _s(v["wall_s"]), f"{v['loss']['final']:.3g}", "—"]
            for k, v in x["sft"].items()]
    for k, v in x["grpo"].items():
        st = v["steps"]
        rows.append([f"grpo {k}", str(len(st)), _s(v["wall_s"]),
                     ", ".join(f"{s['loss_value']:.3g}" for s in st),
                     ", ".join(f"{_s(s['step_s'])} ({_s(s['rollout_s'])})" for s in st)])
    checks = e.get("checks", [])
    return source([r]) + f" {sum(c['ok'] for c in checks)} of {len(checks)} checks held; the whole rehearsal " \
        f"{_s(x['wall_s'])}, peak RSS {x['peak_rss_mb']:,.0f} MB, {x['sandbox_backend']} sandboxes.\n\n" \
        + table(["part", "steps", "wall time", "loss", "step (rollout)"], rows)


TABLES: dict[str, Callable[[list[dict[str, Any]]], str]] = {
    "timings": t_timings, "overview": t_overview, "sandbox": t_sandbox, "serve": t_serve, "generate": t_generate,
    "vllm-generate": t_vllm_generate, "vllm-mismatch": t_vllm_mismatch,
    "rollout": t_rollout, "determinism": t_determinism, "startup": t_startup, "plan": t_plan,
    "rehearsal": t_rehearsal,
}


# -- pages -------------------------------------------------------------------------------------------

def render_page(text: str, records: list[dict[str, Any]], where: str) -> str:
    """``text`` with every marked table rewritten; LisError for an unknown name or an unclosed marker."""
    names = OPEN.findall(text)
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        raise LisError(f"{where}: unknown bench table {unknown[0]!r}", f"use one of: {', '.join(TABLES)}")
    if len(names) != len(BLOCK.findall(text)):
        raise LisError(f"{where}: a <!-- bench:NAME --> marker has no <!-- /bench --> after it", "close it")

    def one(m: re.Match) -> str:
        return f"{m.group(1)}{TABLES[m.group('name')](records).rstrip()}\n{m.group(4)}"

    return BLOCK.sub(one, text)


def pages(docs_dir: Path) -> list[Path]:
    """The pages of ``docs_dir`` that hold a marked table."""
    if not docs_dir.is_dir():
        raise LisError(f"no docs folder at {docs_dir}", "give the folder of the docs pages (--docs)")
    found = [p for p in sorted(docs_dir.glob("*.md")) if OPEN.search(p.read_text(encoding="utf-8", errors="replace"))]
    if not found:
        raise LisError(f"no page in {docs_dir} holds a <!-- bench:NAME --> table", "give the docs folder (--docs)")
    return found


def render_docs(docs_dir: Path, records: list[dict[str, Any]]) -> dict[Path, tuple[str, str]]:
    """{page: (its text now, its text rendered)} for every page of ``docs_dir`` with a marked table."""
    out = {}
    for p in pages(docs_dir):
        try:
            old = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise LisError(f"{p} is not UTF-8 text", "fix the page") from None
        out[p] = (old, render_page(old, records, p.name))
    return out


def stale(rendered: dict[Path, tuple[str, str]]) -> list[str]:
    """The tables whose text differs from what the results files say, as ``page: bench:NAME``."""
    found = []
    for p, (old, new) in rendered.items():
        olds = {m.group("name"): m.group("body") for m in BLOCK.finditer(old)}
        news = {m.group("name"): m.group("body") for m in BLOCK.finditer(new)}
        found += [f"{p.name}: bench:{n}" for n in olds if olds[n] != news.get(n)]
    return found

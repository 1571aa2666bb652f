"""`lis report` end to end: the real command on inputs made by the real producers (eval metrics,
behaviour, efficiency, storage, throughput, GRPO logs; tests/report/build_inputs.py) for the job
matrices the pipeline runs — the default params, an external model only, the trained pair — with
table cells checked against hand-computed values, small-n marks, the paper's number and the
difference beside ours, "waits for" tables, provenance, one-line errors and the page in Chromium."""
from __future__ import annotations

import csv
import json
import re
import subprocess
from pathlib import Path

import pytest

from lis.report.inputs import declared_inputs
from lis.report.paper_numbers import lookup
from tests.conftest import lis
from tests.report.build_inputs import build_all, make_project, params_of

TABLE_IDS = ["table1_design", "table2_main", "table3_long_context", "table4_capability_groups", "table5_rl_paradigms",
             "table6_rl", "table7_data_ablation", "table8_capability_rl", "table9_reasoning", "table10_tokens",
             "table11_throughput", "table12_storage", "table13_sampling", "table14_benchmarks", "learning_check",
             "learning_check_seeds"]
FIGURE_IDS = ["figure1_grid", "figure2_capabilities", "training_curves"]
EXTERNAL_JOBS = {"models": ["ext"], "external": ["ext"], "domains": ["math", "long_context"],
                 "long_context_ablation": ["ext"], "grpo_data": []}
EXT_ENTRY = {"backend": "local", "path": "data/models/ext", "sampling": {"temperature": 0.7, "top_p": 0.8, "top_k": 20,
                                                                       "max_tokens": 192}}


def lis_report(root: Path, *extra: str) -> subprocess.CompletedProcess:
    return lis(["report", "--params", str(root / "params.yaml"), "--log", str(root / "report.log"), *extra],
               cwd=root, check=False)


def md_rows(path: Path) -> list[list[str]]:
    """The data rows of a Markdown table file (cells stripped, links to the viewer removed)."""
    rows = [ln for ln in path.read_text().splitlines() if ln.startswith("| ")]
    return [[re.sub(r"^\[(.*)\]\([^)]*\)$", r"\1", c.strip()) for c in r.strip("|").split(" | ")]
            for r in rows[1:]]


def csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The default params' jobs; held-out context tasks with known rewards for the learning check;
    report.min_n = 4 so that a 4-item cell is a result and a 3-item cell is marked."""
    root = make_project(tmp_path_factory.mktemp("default"), report={"min_n": 4})
    rewards = {("grpo-files", "instruct_pretrain", "sandbox"): [1.0, 1.0, 1.0, 0.0],
               ("sft", "instruct_pretrain", "sandbox"): [0.0, 0.0, 1.0, 0.0]}
    build_all(root, rewards=rewards)
    # a job no params call for: the report must not read it
    stray = root / "data" / "eval" / "stray" / "math" / "vanilla"
    stray.mkdir(parents=True)
    (stray / "metrics.json").write_text("not json: reading it would fail")
    res = lis_report(root)
    assert res.returncode == 0, res.stderr[-2000:]
    return root


def test_default_matrix_writes_every_table_and_figure(default_run):
    out = default_run / "paper_figures"
    for t in TABLE_IDS:
        for ext in ("md", "csv", "tex"):
            assert (out / "tables" / f"{t}.{ext}").stat().st_size > 0, (t, ext)
    for f in FIGURE_IDS:
        assert (out / "figures" / f"{f}.png").read_bytes()[:4] == b"\x89PNG"
        assert (out / "figures" / f"{f}.pdf").read_bytes()[:4] == b"%PDF"
    idx = json.loads((out / "index.json").read_text())
    assert [t["id"] for t in idx["tables"]] == TABLE_IDS
    assert [f["id"] for f in idx["figures"]] == FIGURE_IDS


def test_table2_cells_match_hand_computed_values_with_n_interval_errors_and_small_n_mark(default_run):
    out = default_run / "paper_figures" / "tables"
    rows = {(r[0], r[1]): r for r in md_rows(out / "table2_main.md")}
    # vanilla rewards 1,0,0,1 -> 50.0 on 4 items (= min_n: no mark); sandbox 1,1,0,error -> 66.7 on 3 (marked)
    van, sb, delta = rows[("base", "Math")][2:5]
    assert "(../trajectories/jobs/base/math/vanilla.html)" in (out / "table2_main.md").read_text()
    assert van.startswith("50.0 [") and van.endswith("· n 4 · 0 err"), van
    assert sb.startswith("66.7 [") and sb.endswith("· n 3 · 1 err †"), sb
    assert delta == "+16.7 †"
    rec = next(r for r in csv_rows(out / "table2_main.csv") if r["model"] == "base" and r["domain"] == "math")
    assert float(rec["vanilla_accuracy"]) == 0.5 and int(rec["vanilla_n"]) == 4 and int(rec["sandbox_errors"]) == 1
    assert float(rec["delta"]) == pytest.approx(2 / 3 - 0.5, abs=1e-4)
    assert 0.0 <= float(rec["vanilla_ci95_lo"]) <= 0.5 <= float(rec["vanilla_ci95_hi"]) <= 1.0
    text = (out / "table2_main.md").read_text()
    assert "† n < 4: not a result" in text
    tex = (out / "table2_main.tex").read_text()
    assert r"\begin{tabular}" in tex and r"$^\dagger$" in tex


def test_learning_check_is_paired_by_task(default_run):
    rows = {(r[0], r[2]): r for r in md_rows(default_run / "paper_figures" / "tables" / "learning_check.md")}
    # grpo-files 1,1,1,0 vs sft 0,0,1,0: +50 points on 4 pairs, 2 wins 0 losses 2 ties, exact p = 2/4
    grpo, sft = rows[("grpo-files", "sandbox")], rows[("sft", "sandbox")]
    assert grpo[1] == "sft" and grpo[3].startswith("75.0 [") and sft[3].startswith("25.0 [")
    assert grpo[4].startswith("25.0 [")  # its start's score, in the same mode
    assert grpo[5].startswith("+50.0 [") and grpo[5].endswith("· 4 pairs")
    assert grpo[6] == "2 / 0 / 2" and grpo[7] == "0.5"
    # LLM-RL is compared with its start in its own mode (vanilla); GRPO's vanilla row is shown, not compared
    llm = rows[("llm-rl", "vanilla")]
    assert llm[1] == "sft" and llm[5] != "–" and rows[("llm-rl", "sandbox")][5] == "–"
    assert rows[("grpo-files", "vanilla")][5] == "–"
    text = (default_run / "paper_figures" / "tables" / "learning_check.md").read_text()
    assert "Verdict: no significant difference between grpo-files and sft" in text
    assert "between llm-rl and sft" in text and "(vanilla mode)" in text


def test_unconfigured_tables_say_what_they_wait_for(default_run):
    t = default_run / "paper_figures" / "tables"
    assert "waits for at least two GRPO data variants" in (t / "table7_data_ablation.md").read_text()
    assert "waits for behaviour.groups" in (t / "table4_capability_groups.md").read_text()
    assert "waits for at least two GRPO data variants" in (t / "table7_data_ablation.csv").read_text()


def test_analysis_tables_show_the_analysis_numbers(default_run):
    t = default_run / "paper_figures" / "tables"
    # every sandbox episode: pip install (external) + scipy.optimize (computation) + answer = 3 turns
    r4 = csv_rows(t / "table8_capability_rl.csv")
    after = next(r for r in r4 if r["side"] == "after" and r["model"] == "grpo-files")
    assert float(after["avg_turns"]) == 3.0 and float(after["external"]) == pytest.approx(1 / 3, abs=1e-3)
    assert float(after["compute"]) == pytest.approx(1 / 3, abs=1e-3) and float(after["file"]) == 0.0
    # tokens: vanilla 100 prompt + 10 completion = 110; sandbox prompt 100, model 20+20+10, env 2 x 30 -> 210
    r10 = next(r for r in csv_rows(t / "table10_tokens.csv") if r["model"] == "base" and r["domain"] == "math")
    assert float(r10["vanilla_total"]) == 110.0 and float(r10["sandbox_total"]) == 210.0
    assert float(r10["sandbox_env"]) == 60.0
    r11 = csv_rows(t / "table11_throughput.csv")
    ratio = next(r for r in r11 if r["domain"].startswith("qpm_ratio"))
    assert float(ratio["qpm"]) == pytest.approx(0.5)          # 6 episodes in 120 s vs in 60 s
    r13 = {r["model"]: r for r in csv_rows(t / "table13_sampling.csv")}
    entries = params_of(default_run)["models"]
    assert float(r13["base"]["temperature"]) == entries["base"]["sampling"]["temperature"]
    r12 = csv_rows(t / "table12_storage.csv")
    assert any(r["origin"] == "measured" and float(r["size_gb"]) == pytest.approx(1.234) for r in r12 if r["size_gb"])


def test_provenance_and_only_declared_inputs(default_run):
    out = default_run / "paper_figures"
    idx = json.loads((out / "index.json").read_text())
    declared = declared_inputs(params_of(default_run))
    for path in idx["inputs"]:
        assert path in declared or any(path.startswith(d + "/") for d in declared if d.startswith("data/models/")), path
    assert not any("stray" in p for p in idx["inputs"])
    assert "data/eval/base/math/vanilla/metrics.json" in idx["inputs"]
    assert len(idx["inputs"]["data/eval/base/math/vanilla/metrics.json"]) == 64
    md = (out / "index.md").read_text()
    assert "profile `smoke`" in md and "lis-sandbox" in md
    assert md.startswith("# LLM-in-Sandbox: reproduced tables and figures")
    assert idx["profile"] == "smoke" and idx["git"] is not None and idx["image"]["tag"] == "lis-sandbox:test"
    assert any(t["stage"] == "eval" and t["wall_s"] == 12.5 for t in idx["timings"])
    t2 = next(t for t in idx["tables"] if t["id"] == "table2_main")
    assert set(t2["params"]) == {"jobs", "report"} and all(t2["params"].values())


@pytest.mark.browser
def test_index_html_in_the_browser(default_run):
    from tests.browser import Browser, check_page

    page_path = default_run / "paper_figures" / "index.html"
    with Browser() as b:
        page = b.open(page_path)
        rep = check_page(page)
        assert rep.ok, rep.problems
        imgs = page.eval("Array.from(document.images).map(i => [i.getAttribute('src'), i.naturalWidth])")
        assert sorted(s for s, _ in imgs) == sorted(f"figures/{f}.png" for f in FIGURE_IDS)
        assert all(w > 0 for _, w in imgs)
        sections = page.eval("Array.from(document.querySelectorAll('section h2')).map(h => h.textContent)")
        assert sum(s.startswith("Table ") for s in sections) == 14
        assert "lis-sandbox" in page.eval("document.body.innerText")
        # accuracy cells link to their job's episodes in the trajectory viewer
        href = page.eval("document.querySelector('#table2_main td a').getAttribute('href')")
        assert href == "trajectories/jobs/base/math/vanilla.html"
        job = b.open(page_path.parent / href)
        rep = check_page(job)
        assert rep.ok, rep.problems
        assert job.eval("document.body.innerText").count("t0") >= 1


def test_external_model_only_matrix(tmp_path):
    """(b): one external model, math and long context, no training: the RL tables wait for training
    and no training log is read."""
    root = make_project(tmp_path, jobs=EXTERNAL_JOBS, rl_pairs=[], models={"ext": EXT_ENTRY})
    build_all(root)
    res = lis_report(root)
    assert res.returncode == 0, res.stderr[-2000:]
    out = root / "paper_figures"
    t = out / "tables"
    assert "waits for training" in (t / "table6_rl.md").read_text()
    assert "waits for training" in (t / "table8_capability_rl.md").read_text()
    assert "waits for grpo-files, sft" in (t / "learning_check.md").read_text()
    idx = json.loads((out / "index.json").read_text())
    assert not any(p.startswith("data/train/") for p in idx["inputs"])
    fig = next(f for f in idx["figures"] if f["id"] == "training_curves")
    assert "waits for training" in fig["waiting"]
    rows = {(r[0], r[1]) for r in md_rows(t / "table2_main.md")}
    assert rows == {("ext", "Math"), ("ext", "Long-Context")}
    t3 = md_rows(t / "table3_long_context.md")
    assert t3[0][0] == "ext" and t3[0][2].startswith("25.0 [")     # sandbox_inline rewards 0,1,0,0


def test_paper_number_and_difference_beside_ours(tmp_path):
    """An external model that is the paper's Qwen3-4B-Instruct-2507 (its card names the hub id):
    Table 2 shows the published number and ours − paper."""
    name = "qwen3-4b-instruct-2507"
    jobs = {**EXTERNAL_JOBS, "models": [name], "external": [name], "long_context_ablation": [name]}
    root = make_project(tmp_path, jobs=jobs, rl_pairs=[])
    entry = params_of(root)["models"][name]
    build_all(root, external_cards={name: {"name": name, "entry": entry, "fingerprint": {"model": entry.get("model")},
                                           "trained_here": False}})
    res = lis_report(root)
    assert res.returncode == 0, res.stderr[-2000:]
    ref = lookup("table2", version="v1", model=name, domain="math", mode="vanilla")
    assert ref is not None and ref.found
    row = next(r for r in md_rows(root / "paper_figures" / "tables" / "table2_main.md") if r[1] == "Math")
    assert row[5] == f"{ref.value:.1f} ({ref.confidence})"
    assert row[7] == f"{50.0 - ref.value:+.1f}"
    rec = next(r for r in csv_rows(root / "paper_figures" / "tables" / "table2_main.csv") if r["domain"] == "math")
    assert rec["paper_model"] == name and float(rec["paper_vanilla"]) == ref.value


def test_trained_pair_matrix(tmp_path):
    """(c): jobs.models [grpo-files, llm-rl]: Table 6 rows and both training curves; the learning
    check waits (instruct_pretrain is not among the domains)."""
    jobs = {"models": ["grpo-files", "llm-rl"], "external": [], "domains": ["math", "long_context"],
            "long_context_ablation": ["grpo-files"], "grpo_data": ["files"]}
    root = make_project(tmp_path, jobs=jobs, rl_pairs=[{"before": "llm-rl", "after": "grpo-files", "label": "GRPO vs LLM-RL"}])
    build_all(root)
    res = lis_report(root)
    assert res.returncode == 0, res.stderr[-2000:]
    out = root / "paper_figures"
    t6 = {(r["model"], r["domain"]) for r in csv_rows(out / "tables" / "table6_rl.csv")}
    assert t6 == {(m, d) for m in ("grpo-files", "llm-rl") for d in ("math", "long_context")}
    idx = json.loads((out / "index.json").read_text())
    fig = next(f for f in idx["figures"] if f["id"] == "training_curves")
    assert fig["waiting"] is None
    assert set(fig["inputs"]) == {f"data/train/runs/{r}/{f}" for r in ("grpo-files", "llm-rl")
                                  for f in ("metrics.json", "train_log.csv")}
    assert "waits for grpo-files, sft evaluated on instruct_pretrain" in (out / "tables" / "learning_check.md").read_text()
    t8 = csv_rows(out / "tables" / "table8_capability_rl.csv")
    assert {r["model"] for r in t8} == {"grpo-files", "llm-rl"}


def test_a_missing_declared_input_is_one_line_naming_it(tmp_path):
    root = make_project(tmp_path, jobs=EXTERNAL_JOBS, rl_pairs=[], models={"ext": EXT_ENTRY})
    build_all(root)
    (root / "data" / "eval" / "ext" / "math" / "sandbox" / "metrics.json").unlink()
    res = lis_report(root)
    assert res.returncode != 0
    assert "data/eval/ext/math/sandbox/metrics.json is missing" in res.stderr
    assert "Traceback" not in res.stderr + res.stdout


def test_learning_check_over_seeds_pools_the_replicates_with_the_main_run(tmp_path):
    """jobs.replicates [1, 2]: three seeds (the main run and two replicates), each one's paired GRPO − SFT on
    the held-out tasks, then their mean with a Student-t interval over seeds (df 2), hand-checked."""
    jobs = {"models": ["sft", "grpo-files"], "external": [], "domains": ["instruct_pretrain"],
            "long_context_ablation": [], "grpo_data": ["files"], "replicates": [1, 2]}
    root = make_project(tmp_path, jobs=jobs, rl_pairs=[], report={"min_n": 4})
    main = {("grpo-files", "instruct_pretrain", "sandbox"): [1.0, 1.0, 1.0, 0.0],      # +50
            ("sft", "instruct_pretrain", "sandbox"): [0.0, 0.0, 1.0, 0.0]}
    reps = {("replicates/r1/grpo-files", "instruct_pretrain", "sandbox"): [1.0, 0.0, 1.0, 0.0],   # +25
            ("replicates/r1/sft", "instruct_pretrain", "sandbox"): [0.0, 0.0, 1.0, 0.0],
            ("replicates/r2/grpo-files", "instruct_pretrain", "sandbox"): [0.0, 0.0, 1.0, 0.0],   # 0
            ("replicates/r2/sft", "instruct_pretrain", "sandbox"): [0.0, 0.0, 1.0, 0.0]}
    build_all(root, rewards={**main, **reps})
    assert "data/eval/replicates/r2/grpo-files/instruct_pretrain/sandbox/trajectories.jsonl" in \
        declared_inputs(params_of(root))
    res = lis_report(root)
    assert res.returncode == 0, res.stderr[-2000:]
    out = root / "paper_figures" / "tables"
    rows = md_rows(out / "learning_check_seeds.md")
    assert [r[0] for r in rows] == ["0 (main run)", "1", "2", "mean over seeds"]
    assert [r[1] for r in rows[:3]] == ["0", "1", "2"] and [r[2] for r in rows[:3]] == ["0", "1", "2"]
    assert [r[5].split(" [")[0] for r in rows[:3]] == ["+50.0", "+25.0", "+0.0"]
    # mean 25, sd 25, t(0.975, 2) = 4.3027: half-width 4.3027 * 25 / sqrt(3) = 62.1
    assert rows[3][5] == "+25.0 pts [-37.1, +87.1] · k 3 seeds", rows[3]
    idx = json.loads((root / "paper_figures" / "index.json").read_text())
    assert idx["learning_check_seeds"]["over_seeds"]["ci95"] == pytest.approx([-0.371, 0.871], abs=1e-3)

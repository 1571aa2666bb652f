"""Results files and the docs rendered from them: `lis bench render --check` passes on the repository (its
docs say what benchmarks/ says) and fails on a page whose table was edited by hand; `lis bench time` writes
a results file; `lis bench all` records a failing benchmark in its file and goes on. No benchmark runs here."""
from __future__ import annotations

import json
import shutil
import sys

from lis.bench import render, results, suite
from lis.bench.suite import Benchmark, check
from tests.conftest import ROOT, lis


def test_the_docs_say_what_the_results_files_say():
    r = lis(["bench", "render", "--check"], check=False)
    assert r.returncode == 0, r.stderr + r.stdout
    pages = render.pages(ROOT / "docs")
    assert {"timings.md", "performance.md"} <= {p.name for p in pages}


def test_a_table_edited_by_hand_fails_the_check_and_render_rewrites_it(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for page in render.pages(ROOT / "docs"):
        shutil.copy(page, docs / page.name)
    args = ["bench", "render", "--docs", str(docs), "--results", str(ROOT / "benchmarks")]
    lis(args)
    page = docs / "timings.md"
    text = page.read_text()
    start = text.index("<!-- bench:timings -->")
    end = text.index("<!-- /bench -->", start)
    page.write_text(text[:end] + "| `make test` | **12 s** | 0 | typed by hand | — | — |\n" + text[end:])
    r = lis([*args, "--check"], check=False)
    assert r.returncode == 1 and "timings.md: bench:timings" in r.stderr, r.stderr
    assert len([x for x in r.stderr.splitlines() if x.startswith("error:")]) == 1
    lis(args)
    assert page.read_text() == text
    assert lis([*args, "--check"], check=False).returncode == 0


def test_render_refuses_an_unknown_table_and_a_bad_results_file(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "x.md").write_text("<!-- bench:nonsense -->\n<!-- /bench -->\n")
    r = lis(["bench", "render", "--docs", str(docs), "--check"], check=False)
    assert r.returncode == 2 and "unknown bench table 'nonsense'" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "results"
    bad.mkdir()
    (bad / "2026-01-01T0000Z-abc.json").write_text('{"schema": 1, "kind": "bench"}')
    r = lis(["bench", "render", "--results", str(bad), "--check"], check=False)
    assert r.returncode == 2 and "is not a lis results file" in r.stderr


def test_bench_time_records_the_wall_time_and_the_status(tmp_path):
    r = lis(["bench", "time", "--name", "a short command", "--out-dir", str(tmp_path), "--",
             sys.executable, "-c", "import time, sys; time.sleep(0.3); sys.exit(3)"], check=False)
    assert r.returncode == 3, r.stderr
    (path,) = tmp_path.glob("*.json")
    rec = results.read(path)
    assert path.name.endswith("-a-short-command.json") and rec["kind"] == "time"
    assert rec["name"] == "a short command" and rec["rc"] == 3 and 0.3 <= rec["wall_s"] < 30
    assert rec["command"][0] == sys.executable and rec["commit"] and isinstance(rec["dirty"], bool)
    assert rec["machine"]["cores"] >= 1 and rec["machine"]["cpu"] and rec["machine"]["memory_gib"] > 0
    table = render.t_timings([rec])
    assert "| `a short command` | **" in table and "** | 3 | " in table and "`make test` | not measured yet" in table
    r = lis(["bench", "time", "--name", "x", "--out-dir", str(tmp_path), "--", "no-such-program-here"], check=False)
    assert r.returncode == 2 and "command not found: no-such-program-here" in r.stderr


def test_a_failing_benchmark_is_recorded_and_the_run_goes_on(tmp_path):
    def raises(ctx):
        raise RuntimeError("broken on purpose")

    def fails_a_check(ctx):
        checks: list = []
        check(checks, "one is two", 1 == 2, 1)
        return {"numbers": {"x": 1}, "checks": checks}

    def fine(ctx):
        ctx.progress("working")
        return {"numbers": {"y": 2}, "checks": [{"check": "ok", "ok": True, "value": None}]}

    said: list[str] = []
    benches = [Benchmark("a", "raises", raises, 0.1), Benchmark("b", "fails a check", fails_a_check, 0.1),
               Benchmark("c", "passes", fine, 0.1)]
    record, path = suite.run_suite(benches, ROOT, tmp_path, progress=said.append)
    saved = json.loads(path.read_text())
    assert saved["benchmarks"]["a"]["ok"] is False and "broken on purpose" in saved["benchmarks"]["a"]["error"]
    assert saved["benchmarks"]["b"]["ok"] is False and saved["benchmarks"]["b"]["numbers"] == {"x": 1}
    assert saved["benchmarks"]["c"]["ok"] is True and saved["benchmarks"]["c"]["wall_s"] >= 0
    assert saved["ok"] is False and saved["selected"] == ["a", "b", "c"] and "[3/3] c (~0.1 min): working" in said
    overview = render.t_overview([results.read(path)])
    assert "failed to run: RuntimeError: broken on purpose" in overview and "0 of 1 (**failed**)" in overview


def test_only_picks_benchmarks_by_name():
    r = lis(["bench", "all", "--only", "nonsense"], check=False)
    assert r.returncode == 2 and "unknown benchmark(s) nonsense" in r.stderr and "rehearsal" in r.stderr
    from lis.cli.bench import SUITE

    assert [b.name for b in suite.select(SUITE, "plan,startup")] == ["startup", "plan"]
    assert "determinism" not in [b.name for b in suite.select(SUITE, None)]

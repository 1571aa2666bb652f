"""The trajectory viewer (lis view) on real episodes, checked in a real headless Chromium.

The episodes are made by the real eval runner: a scripted model behind a real OpenAI-compatible
HTTP server drives the agent in the real sandbox (Docker), as tests/eval/test_runner.py does. The
script is hostile on purpose: its text, its commands' output and the file it writes carry HTML and
script that must show as text. One episode prints 70 long lines (folded, never cut); one runs out of
replies (a model error: outcome "error").
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from lis.errors import LisError
from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.models.server import ChatServer
from lis.report.viewer import OUTCOMES, episode_ref, load, outcome, render_site, view
from tests.browser import Browser, check_page
from tests.conftest import copy_repo, run

pytestmark = [pytest.mark.browser]

# 70 lines of 209 characters: under the agent's observation limits (80 lines, 20,000 characters), far
# over the viewer's folding threshold
BIG_OUTPUT = "python3 -c \"print(chr(10).join(f'line {i:03d} ' + 'x' * 200 for i in range(1, 71)))\""
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script></pre></details>"\'&amp;'


def _add_model(repo: Path, name: str, base_url: str, **sections) -> None:
    path = repo / "params.yaml"
    data = yaml.safe_load(path.read_text())
    data["models"][name] = {"backend": "openai", "model": name, "base_url": base_url, "api_key_env": "NONE_KEY",
                            "max_retries": 1, "timeout_s": 30, "sampling": {"temperature": 0.0, "max_tokens": 256}}
    for section, values in sections.items():
        data[section].update(values)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _lis(repo: Path, *args, check=True):
    return run(["lis", *args], cwd=repo, check=check, env={"LIS_RUN_ID": "pytest-view"})


@pytest.fixture(scope="module")
def jobs(tmp_path_factory, image_tag) -> dict[str, Path]:
    """Two real eval jobs of the scripted model 'agent' on three math tasks: sandbox and vanilla."""
    repo = copy_repo(tmp_path_factory.mktemp("viewer") / "repo")
    _lis(repo, "tasks", "--domain", "math", "--limit", "3", "--out", "data/tasks/math.jsonl")
    tasks = [json.loads(x) for x in (repo / "data/tasks/math.jsonl").read_text().splitlines()]
    gold = tasks[0]["ground_truth"]
    sandbox_script = [
        # episode 1: hostile text everywhere, a 15,000-character observation, the editor, the right answer
        assistant(f"I will look around. {HOSTILE}",
                  tool_call("execute_bash", {"command": f"cat <<'END'\n{HOSTILE}\nEND\n" + BIG_OUTPUT})),
        assistant(None, tool_call("str_replace_editor", {"command": "create", "path": "/testbed/solve.py",
                                                         "file_text": f"# {HOSTILE}\nprint({gold})\n"})),
        assistant("Computing.", tool_call("execute_bash", {"command": "python3 /testbed/solve.py > /testbed/answer.txt; "
                                                                      "cat /testbed/answer.txt; exit 3"})),
        assistant("Done.", tool_call("submit", {})),
        # episode 2: a wrong answer
        assistant(None, tool_call("execute_bash", {"command": "echo 1 > /testbed/answer.txt"})),
        assistant("Done.", tool_call("submit", {})),
        # episode 3: the model has no reply left: a model error (outcome "error")
    ]
    with ChatServer(ScriptedModel(sandbox_script, name="agent")) as srv:
        _add_model(repo, "agent", srv.base_url,
                   eval={"workers": 1, "repeats": {"math": 1}, "max_error_share": 1.0, "max_attempts": 1})
        _lis(repo, "eval", "run", "--model", "agent", "--domain", "math", "--mode", "sandbox", "--profile", "ci",
             "--workers", "1")
    vanilla_script = [assistant(f"\\boxed{{{gold}}}"), assistant(f"{HOSTILE} \\boxed{{-1}}"),
                      assistant("\\boxed{-2}")]
    with ChatServer(ScriptedModel(vanilla_script, name="agent")) as srv:
        _add_model(repo, "agent", srv.base_url)
        _lis(repo, "eval", "run", "--model", "agent", "--domain", "math", "--mode", "vanilla", "--profile", "ci",
             "--workers", "1")
    return {m: repo / f"data/eval/agent/math/{m}" for m in ("sandbox", "vanilla")}


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


@pytest.fixture(scope="module")
def site(jobs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "view"
    r = run(["lis", "view", str(jobs["sandbox"]), str(jobs["vanilla"] / "trajectories.jsonl"), "--out", str(out)])
    assert r.stdout.strip() == str(out / "index.html")
    return out


def _records(jobs) -> list[dict]:
    return load([jobs["sandbox"], jobs["vanilla"]]).records


def test_the_runner_made_the_episodes_the_test_needs(jobs):
    recs = {(r["mode"], r["task_id"]): r for r in _records(jobs)}
    sandbox = sorted((r for r in recs.values() if r["mode"] == "sandbox"), key=lambda r: r["task_id"])
    assert len(recs) == 6 and {outcome(r) for r in recs.values()} == {"correct", "wrong", "error"}
    assert sum(r["termination"] == "model_error" for r in sandbox) == 1
    calls = [c for r in sandbox for s in r["steps"] for c in s["calls"]]
    assert any(c["tool"] == "str_replace_editor" for c in calls) and any(c["exit_code"] == 3 for c in calls)
    big = [c["observation"] for c in calls if "line 070 " in c["observation"]]
    assert len(big) == 1 and len(big[0]) > 14000 and "truncated" not in big[0]


def test_every_page_loads_in_chromium_with_no_error_and_no_broken_link(site, jobs, browser):
    pages = [site / "index.html", *sorted((site / "jobs").rglob("*.html")), *sorted((site / "episodes").rglob("*.html"))]
    assert len(pages) == 1 + 2 + 6
    times = []
    for p in pages:
        page = browser.open(p)
        rep = check_page(page)
        assert rep.ok, (p, rep.problems)
        times.append(rep.load_s)
        page.close()
    index = browser.open(site / "index.html")
    assert index.eval("document.querySelectorAll('#episodes tbody tr').length") == 6
    hrefs = index.eval("[...document.querySelectorAll('#episodes a')].map(a => a.getAttribute('href'))")
    assert len(hrefs) == 6 and all(not h.startswith("/") and (site / h).is_file() for h in hrefs)
    index.screenshot(site.parent / "index.png")
    assert (site.parent / "index.png").stat().st_size > 1000
    print(f"page loads: {len(times)}, mean {sum(times) / len(times):.3f} s, max {max(times):.3f} s")


def test_episode_page_shows_every_part_of_the_record(site, jobs, browser):
    rec = next(r for r in _records(jobs) if r["mode"] == "sandbox" and outcome(r) == "correct")
    page = browser.open(next((site / "episodes").rglob(f"00000-{rec['task_id']}-r0.html")))
    text = page.eval("document.body.innerText")
    for part in ("turn 0", "turn 3", "execute_bash", "str_replace_editor", "/testbed/solve.py", "exit code",
                 "math_verify", rec["answer"], "submitted", rec["episode_id"], "Task", "user message",
                 f"prompt {rec['steps'][0]['prompt_tokens']:,}", "LLM", "exec"):
        assert part in text, part
    # the editor's file content, whole, and the exit code 3 of the third call
    assert page.eval("[...document.querySelectorAll('pre')].some(p => p.textContent.includes('print(')"
                     " && p.textContent.includes('# <img src=x'))")
    assert page.eval("[...document.querySelectorAll('.call.failed')].length") >= 1
    assert rec["steps"][2]["calls"][0]["exit_code"] == 3


def test_hostile_text_in_observations_and_output_is_shown_as_text(site, jobs, browser):
    for p in sorted((site / "episodes").rglob("*.html")) + [site / "index.html"]:
        page = browser.open(p)
        assert page.eval("window.__pwned === undefined"), p
        assert page.eval("document.querySelectorAll('img, [onerror]').length") == 0, p
        n_scripts = 1 if p.name == "index.html" else 0
        assert page.eval("document.scripts.length") == n_scripts, p
        page.close()
    rec = next(r for r in _records(jobs) if r["mode"] == "sandbox" and outcome(r) == "correct")
    obs = rec["steps"][0]["calls"][0]["observation"]
    assert HOSTILE in obs  # the real sandbox printed it
    page = browser.open(next((site / "episodes").rglob(f"00000-{rec['task_id']}-r0.html")))
    # shown exactly, as text, in the observation and in the model's own content
    assert page.eval(f"[...document.querySelectorAll('pre')].some(p => p.textContent === {json.dumps(obs)})")
    assert page.eval(f"document.body.innerText.includes({json.dumps(HOSTILE)})")


def test_a_large_observation_is_folded_and_whole(site, jobs, browser):
    rec = next(r for r in _records(jobs) if r["mode"] == "sandbox" and outcome(r) == "correct")
    obs = rec["steps"][0]["calls"][0]["observation"]
    page = browser.open(next((site / "episodes").rglob(f"00000-{rec['task_id']}-r0.html")))
    folded = page.eval(f"""[...document.querySelectorAll('details')].filter(d =>
        d.querySelector('pre') && d.querySelector('pre').textContent === {json.dumps(obs)})
        .map(d => ({{open: d.open, summary: d.querySelector('summary').textContent,
                     visible: d.querySelector('pre').checkVisibility()}}))""")
    assert len(folded) == 1 and folded[0]["open"] is False and folded[0]["visible"] is False
    assert f"{len(obs):,} characters" in folded[0]["summary"]
    assert page.eval("""(() => { const d = [...document.querySelectorAll('details')].find(d =>
        d.querySelector('pre') && d.querySelector('pre').textContent.includes('line 070 x'));
        d.querySelector('summary').click(); return d.open && d.querySelector('pre').checkVisibility()
        && d.querySelector('pre').getBoundingClientRect().height > 500; })()""")
    small = rec["steps"][2]["calls"][0]["observation"]   # a short one stays open
    assert page.eval(f"[...document.querySelectorAll('pre')].some(p => p.textContent === {json.dumps(small)}"
                     " && !p.closest('details'))")


def test_listings_split_into_parts_and_every_link_resolves(jobs, tmp_path, browser):
    index = render_site(load([jobs["sandbox"], jobs["vanilla"]]), tmp_path / "view", page_rows=2)
    parts = sorted((tmp_path / "view" / "jobs").rglob("*.html"))
    assert [p.name for p in parts] == ["sandbox-2.html", "sandbox.html", "vanilla-2.html", "vanilla.html"]
    page = browser.open(index)
    assert page.eval("document.getElementById('episodes')") is None
    assert "more than one page lists" in page.eval("document.getElementById('too-many').textContent")
    assert page.eval("[...document.querySelectorAll('#jobs a')].map(a => a.textContent)") == ["3", "3"]
    assert check_page(page).ok
    listed = []
    for p in parts:
        jp = browser.open(p)
        rep = check_page(jp)
        assert rep.ok, rep.problems
        listed += jp.eval("[...document.querySelectorAll('#episodes tbody a')].map(a => a.href)")
        assert jp.eval("[...document.querySelectorAll('nav a')].map(a => a.textContent)")[0] == "all jobs"
    assert len(listed) == len(set(listed)) == 6
    for p in sorted((tmp_path / "view" / "episodes").rglob("*.html")):   # "this job" leads to the part listing it
        ep = browser.open(p)
        job_link = ep.eval("[...document.querySelectorAll('nav a')].find(a => a.textContent === 'this job').href")
        assert job_link.split("/jobs/")[1] in {q.relative_to(tmp_path / "view" / "jobs").as_posix() for q in parts}
        listing = browser.open(Path(job_link.removeprefix("file://")))
        assert p.as_uri() in listing.eval("[...document.querySelectorAll('#episodes tbody a')].map(a => a.href)")
        assert check_page(ep).ok
        ep.close()
        listing.close()


def _visible(page) -> int:
    return page.eval("[...document.querySelectorAll('#episodes tbody tr')].filter(r => !r.hidden).length")


def _set(page, name: str, value: str) -> None:
    page.eval(f"""(() => {{ const s = document.getElementById('filter-{name}'); s.value = {json.dumps(value)};
        s.dispatchEvent(new Event(s.tagName === 'INPUT' ? 'input' : 'change')); }})()""")


def test_filters_and_sorting_work_in_the_browser(site, jobs, browser):
    recs = _records(jobs)
    page = browser.open(site / "index.html")
    assert _visible(page) == len(recs)
    for name, key in (("mode", lambda r: r["mode"]), ("outcome", outcome), ("model", lambda r: r["model"]),
                      ("domain", lambda r: r["domain"])):
        values = page.eval(f"[...document.getElementById('filter-{name}').options].map(o => o.value).filter(v => v)")
        assert sorted(values) == sorted({key(r) for r in recs}), name
        for v in values:
            _set(page, name, v)
            want = sum(key(r) == v for r in recs)
            assert _visible(page) == want and page.eval("document.getElementById('shown').textContent") == str(want)
        _set(page, name, "")
    _set(page, "mode", "sandbox")
    _set(page, "outcome", "error")
    assert _visible(page) == 1
    _set(page, "mode", "")
    _set(page, "outcome", "")
    _set(page, "text", "model_error")
    assert _visible(page) == 1
    _set(page, "text", "")
    assert page.eval("document.getElementById('filter-caps')") is None  # no annotation given: no such filter
    # sorting by reward, then descending
    col = page.eval("[...document.querySelectorAll('#episodes th')].findIndex(th => th.textContent === 'reward')")
    page.eval(f"document.querySelectorAll('#episodes th')[{col}].click()")
    order = page.eval(f"[...document.querySelectorAll('#episodes tbody tr')].map(r => r.cells[{col}].textContent)")
    assert order == sorted(order, key=lambda s: -1 if s == "–" else float(s))
    page.eval(f"document.querySelectorAll('#episodes th')[{col}].click()")
    again = page.eval(f"[...document.querySelectorAll('#episodes tbody tr')].map(r => r.cells[{col}].textContent)")
    assert again == order[::-1] or [x for x in again if x != "–"] == [x for x in order if x != "–"][::-1]
    assert check_page(page).ok


def test_capability_annotations_show_per_turn_and_filter(jobs, tmp_path, browser):
    recs = _records(jobs)
    sandbox = [r for r in recs if r["mode"] == "sandbox" and r["steps"]]
    caps = {(episode_ref(sandbox[0]), 0): ["file", "computation"], (episode_ref(sandbox[0]), 2): ["computation"],
            (episode_ref(sandbox[1]), 0): ["external"]}
    path = tmp_path / "caps.jsonl"
    path.write_text("".join(json.dumps({"episode": k[0], "step": k[1], "capabilities": v}) + "\n"
                            for k, v in caps.items()))
    out = tmp_path / "view"
    run(["lis", "view", str(jobs["sandbox"]), str(jobs["vanilla"]), "--out", str(out), "--capabilities", str(path)])
    page = browser.open(out / "index.html")
    assert sorted(page.eval("[...document.getElementById('filter-caps').options].map(o => o.value)")) == \
        ["", "computation", "external", "file"]
    for cap, want in (("computation", 1), ("file", 1), ("external", 1)):
        _set(page, "caps", cap)
        assert _visible(page) == want
    _set(page, "caps", "external")
    href = page.eval("[...document.querySelectorAll('#episodes tbody tr')].find(r => !r.hidden).querySelector('a')"
                     ".getAttribute('href')")
    ep = browser.open(out / href)
    assert ep.eval("document.querySelector('#turn-0 .turn-head').textContent").count("external") == 1
    assert check_page(ep).ok and check_page(page).ok


def _row_caps(page) -> dict[str, str]:
    return dict(page.eval("[...document.querySelectorAll('#episodes tbody tr')].map(r => "
                          "[r.querySelector('a').getAttribute('href'), r.getAttribute('data-caps')])"))


def test_the_behaviour_classifier_annotates_turns(jobs, tmp_path, browser):
    """--classify runs the behaviour analysis's classifier; --capabilities reads the behaviour
    stage's turns.jsonl (written here by the real `lis behaviour analyse`): the same annotation."""
    from lis.analysis.behaviour import classify_episode

    recs = _records(jobs)
    want = {episode_ref(r): sorted({c for t in classify_episode(r).per_turn for c in t.capabilities}) for r in recs}
    assert any(want.values())   # the scripted episode writes and runs a script: the classifier sees it
    run(["lis", "behaviour", "analyse", str(jobs["sandbox"]), str(jobs["vanilla"]), "--out", str(tmp_path / "b.json"),
         "--turns-out", str(tmp_path / "turns.jsonl")])
    seen = []
    for name, extra in (("classified", ["--classify"]), ("from-file", ["--capabilities", str(tmp_path / "turns.jsonl")])):
        run(["lis", "view", str(jobs["sandbox"]), str(jobs["vanilla"]), "--out", str(tmp_path / name), *extra])
        page = browser.open(tmp_path / name / "index.html")
        options = page.eval("[...document.getElementById('filter-caps').options].map(o => o.value).filter(v => v)")
        assert sorted(options) == sorted({c for cs in want.values() for c in cs})
        for cap in options:
            _set(page, "caps", cap)
            assert _visible(page) == sum(cap in cs for cs in want.values())
        seen.append(_row_caps(page))
        assert check_page(page).ok
    assert seen[0] == seen[1]
    r = run(["lis", "view", str(jobs["sandbox"]), "--out", str(tmp_path / "x"), "--classify", "--capabilities",
             str(tmp_path / "turns.jsonl")], check=False)
    assert r.returncode == 2 and "use one of them" in r.stderr


def test_missing_input_is_a_one_line_error(tmp_path):
    helped = run(["lis", "view", "--help"]).stdout
    assert "Usage: lis view" in helped and "--classify" in helped and "--capabilities" in helped
    for args, needle in (([str(tmp_path / "nope.jsonl")], "no such file or folder"),
                         ([str(tmp_path)], "no trajectories.jsonl in this folder")):
        r = run(["lis", "view", *args, "--out", str(tmp_path / "out")], check=False)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], r.stderr
    bad = tmp_path / "caps.jsonl"
    bad.write_text("{not json\n")
    (tmp_path / "t.jsonl").write_text("")
    r = run(["lis", "view", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "o2"), "--capabilities", str(bad)],
            check=False)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "not a capabilities row" in r.stderr


# -- without the sandbox: hostile records in every field, scale, the output folder ----------------
def _record(i: int, **over) -> dict:
    rec = {"task_id": f"t{i}", "model": "m", "mode": "sandbox", "domain": "math", "repeat": 0, "reward": float(i % 2),
           "termination": "submitted", "turns": 1, "answer": str(i), "score": {"scorer": "math_verify", "extracted": str(i)},
           "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": f"problem {i}"}],
           "steps": [{"index": 0, "content": "c", "reasoning": "r", "llm_latency_s": 0.1, "prompt_tokens": 10,
                      "completion_tokens": 5, "calls": [{"id": "1", "tool": "execute_bash", "arguments": {"command": "ls"},
                                                         "raw_arguments": None, "observation": "x" * (i % 7),
                                                         "exit_code": 0, "exec_time_s": 0.01}]}]}
    rec.update(over)
    return rec


def _write_jsonl(path: Path, recs: list[dict], extra: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs) + extra)
    return path


def test_hostile_names_in_every_field_stay_text_and_inside_the_folder(tmp_path, browser):
    evil = '../../"><script>window.__pwned=3</script><img src=x onerror=window.__pwned=4>'
    rec = _record(1, model=evil, domain=evil, mode=evil, task_id=evil, termination=evil, error=evil, answer=evil,
                  score={"scorer": evil, "extracted": evil, "error": evil, evil: evil},
                  messages=[{"role": evil, "content": evil}])
    rec["steps"][0].update(content=evil, reasoning=evil, finish_reason=evil)
    rec["steps"][0]["calls"][0].update(tool=evil, id=evil, error=evil, arguments={evil: evil, "command": evil},
                                       observation=evil)
    rec2 = _record(2, task_id=evil + "-2")   # its own job: every page holds the hostile text
    rec2["steps"][0]["calls"][0].update(arguments=None, raw_arguments=evil, tool=None)
    out = tmp_path / "view"
    index = view([_write_jsonl(tmp_path / "t.jsonl", [rec, rec2])], out,
                 capabilities={(episode_ref(rec), 0): [evil]})
    files = [p for p in out.rglob("*") if p.is_file()]
    assert all(out in p.resolve().parents for p in files) and not (tmp_path.parent / "episodes").exists()
    for p in [index, *sorted(out.rglob("*.html"))]:
        page = browser.open(p)
        assert page.eval("window.__pwned === undefined")
        assert page.eval("document.querySelectorAll('img, [onerror]').length") == 0
        assert page.eval("document.body.innerText").count(evil) >= 1
        assert check_page(page).ok, check_page(page).problems
    page = browser.open(index)
    _set(page, "model", evil)
    assert _visible(page) == 1
    _set(page, "caps", evil)
    assert _visible(page) == 1


def test_torn_lines_are_reported_not_fatal(tmp_path, browser):
    src = _write_jsonl(tmp_path / "t.jsonl", [_record(1), _record(2)], extra='{"task_id": "torn", "mo')
    (tmp_path / "u.jsonl").write_text('[1, 2]\n\n')
    loaded = load([src, tmp_path / "u.jsonl", src])   # the same file twice is read once
    assert len(loaded.records) == 2 and len(loaded.problems) == 2
    index = render_site(loaded, tmp_path / "view")
    page = browser.open(index)
    assert "2 line(s) skipped" in page.eval("document.getElementById('problems').textContent")


def test_thousands_of_episodes_make_small_pages(tmp_path):
    big = "y" * 20000
    recs = [_record(i) for i in range(3000)]
    for r in recs[:50]:
        r["steps"][0]["calls"][0]["observation"] = big
    t0 = time.monotonic()
    index = view([_write_jsonl(tmp_path / "t.jsonl", recs)], tmp_path / "view")
    took = time.monotonic() - t0
    pages = list((tmp_path / "view" / "episodes").rglob("*.html"))
    assert len(pages) == 3000
    assert index.stat().st_size < 3_000_000 and max(p.stat().st_size for p in pages) < 100_000
    small = view([tmp_path / "t.jsonl"], tmp_path / "view", page_rows=1000)   # more rows than a page lists
    assert small.stat().st_size < 20_000 and len(list((tmp_path / "view" / "jobs").rglob("*.html"))) == 3
    assert max(p.stat().st_size for p in (tmp_path / "view" / "jobs").rglob("*.html")) < 1_000_000
    assert took < 120


def test_the_viewer_rewrites_only_its_own_folder(tmp_path):
    src = _write_jsonl(tmp_path / "t.jsonl", [_record(i) for i in range(3)])
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("keep")
    with pytest.raises(LisError, match="only rewrites folders it wrote"):
        view([src], foreign)
    assert (foreign / "thesis.tex").read_text() == "keep"
    out = tmp_path / "view"
    view([src], out)
    assert len(list((out / "episodes").rglob("*.html"))) == 3
    view([_write_jsonl(tmp_path / "t2.jsonl", [_record(9)])], out)   # the earlier pages go
    assert len(list((out / "episodes").rglob("*.html"))) == 1
    assert set(OUTCOMES) == {"correct", "partial", "wrong", "error"}
    assert [outcome({"reward": r}) for r in (1.0, 0.5, 0.0, None)] == ["correct", "partial", "wrong", "error"]

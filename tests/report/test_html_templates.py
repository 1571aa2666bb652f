"""The report's HTML pages from their Jinja2 templates (lis.report.html): each page rendered from
fixed records and tables, read back with an HTML parser (structure and text, not whitespace), and
hostile text everywhere (a record's task, output, arguments, model name; a table's cells and notes)
shown as text: no element, attribute or script of its own. No Docker, no browser (test_viewer.py
and test_report.py check the pages in Chromium)."""
from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import jinja2
import pytest

from lis.report.html import FOLD_CHARS, environment, render
from lis.report.index import write_index
from lis.report.tables import Cell, Table
from lis.report.viewer import Loaded, render_site

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script></pre></details>"\'&amp;{{ x }}'
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class El:
    tag: str
    attrs: dict[str, str | None]
    text: str = ""                                   # all text inside, as parsed (entities decoded)
    children: list["El"] = field(default_factory=list)


class Page(HTMLParser):
    """A parsed page: every element in document order, with its text."""

    VOID = {"meta", "img", "input", "br", "link"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[El] = []
        self._open: list[El] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        el = El(tag, dict(attrs))
        if self._open:
            self._open[-1].children.append(el)
        self.elements.append(el)
        if tag not in self.VOID:
            self._open.append(el)

    def handle_endtag(self, tag):
        top = self._open[-1].tag if self._open else None
        assert top == tag, f"</{tag}> closes <{top}>"
        self._open.pop()

    def handle_data(self, data):
        for el in self._open:
            el.text += data

    def all(self, tag: str, **attrs: str) -> list[El]:
        return [e for e in self.elements
                if e.tag == tag and all(e.attrs.get(k.rstrip("_")) == v for k, v in attrs.items())]

    def one(self, tag: str, **attrs: str) -> El:
        found = self.all(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]


def _read(path: Path) -> Page:
    page = Page(path.read_text(encoding="utf-8"))
    assert not page._open, [e.tag for e in page._open]     # every element closed
    return page


def _no_injection(page: Page, scripts: int) -> None:
    assert not [e for e in page.elements if any(a.startswith("on") for a in e.attrs)]
    assert len(page.all("script")) == scripts
    assert not [e for e in page.elements if e.tag == "img" and e.attrs.get("src") == "x"]


def _record(i: int, **kw) -> dict:
    return {"task_id": f"t{i}", "model": "agent", "domain": "math", "mode": "sandbox", "repeat": 0, "reward": 1.0,
            "termination": "submit", "turns": 1, "prompt_tokens": 1234, "completion_tokens": 56, "wall_s": 2.5,
            "answer": f"42 {HOSTILE}", "score": {"scorer": "math", "extracted": HOSTILE, "why": HOSTILE},
            "messages": [{"role": "system", "content": "system " + HOSTILE},
                         {"role": "user", "content": "user " + HOSTILE},
                         {"role": "assistant", "content": "not shown"}],
            "steps": [{"index": 0, "prompt_tokens": 10, "completion_tokens": 5, "llm_latency_s": 0.25,
                       "finish_reason": "tool_calls", "reasoning": "think " + HOSTILE, "content": "say " + HOSTILE,
                       "calls": [{"tool": "execute_bash", "id": "c1",
                                  "arguments": {"command": "cat x", "timeout": HOSTILE},
                                  "exit_code": 3, "exec_time_s": 0.5, "observation": "\n".join([HOSTILE] * 60)},
                                 {"tool": None, "id": "c2", "arguments": None, "raw_arguments": "{bad " + HOSTILE,
                                  "exit_code": 0, "observation": "ok"}]}],
            **kw}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html") / "view"
    recs = [_record(0), _record(1, reward=0.0, model=HOSTILE, task_id=HOSTILE),
            _record(2, reward=None, termination="model_error", error=HOSTILE, mode="vanilla", steps=[])]
    caps = {("agent/math/t0#0@sandbox", 0): ["file", HOSTILE]}
    render_site(Loaded(recs, [Path("a/trajectories.jsonl"), Path(HOSTILE)], [f"x.jsonl:1: {HOSTILE}"]), out, caps,
                title="Trajectories " + HOSTILE)
    return out


def test_viewer_index_lists_jobs_and_episodes(site):
    page = _read(site / "index.html")
    _no_injection(page, scripts=1)
    assert page.one("title").text == "Trajectories " + HOSTILE
    assert page.one("h1").text == "Trajectories " + HOSTILE
    assert page.one("div", id="problems").text.startswith("1 line(s) skipped")
    assert HOSTILE in page.one("details").text
    jobs = page.one("table", id="jobs")
    assert [th.text for th in jobs.children[0].children[0].children] == [
        "model", "domain", "mode", "episodes", "correct", "partial", "wrong", "error", "mean reward (%)"]
    rows = [[td.text for td in tr.children] for tr in jobs.children[1].children]
    assert rows == [[HOSTILE, "math", "sandbox", "1", "0", "0", "1", "0", "0.0"],
                    ["agent", "math", "sandbox", "1", "1", "0", "0", "0", "100.0"],
                    ["agent", "math", "vanilla", "1", "0", "0", "0", "1", "–"]]
    table = page.one("table", id="episodes")
    heads = [th.text for th in table.children[0].children[0].children]
    assert heads[-1] == "capabilities" and len(heads) == 14
    trs = table.children[1].children
    assert [tr.attrs["data-outcome"] for tr in trs] == ["wrong", "correct", "error"]
    assert trs[0].attrs["data-model"] == HOSTILE and trs[0].children[4].text == HOSTILE
    assert trs[1].attrs["data-caps"] == f"{HOSTILE} file"
    assert [td.text for td in trs[1].children[:13]] == ["2", "agent", "math", "sandbox", "t0", "0", "correct", "1.000",
                                                        "submit", "1", "1,234", "56", "2.50"]
    assert trs[1].children[7].attrs["data-sort"] == "1.0" and trs[2].children[7].attrs["data-sort"] == ""
    for tr in trs:   # every link goes to a page that exists
        assert (site / tr.children[4].children[0].attrs["href"]).is_file()
    selects = {s.attrs["data-filter"]: [o.attrs["value"] for o in s.children] for s in page.all("select")}
    assert selects == {"model": ["", HOSTILE, "agent"], "domain": ["", "math"], "mode": ["", "sandbox", "vanilla"],
                       "outcome": ["", "correct", "wrong", "error"], "caps": ["", HOSTILE, "file"]}
    assert page.one("b", id="shown").text == "3"


def test_viewer_job_page(site):
    page = _read(next((site / "jobs").rglob("vanilla.html")))
    _no_injection(page, scripts=1)
    assert page.one("h1").text == "agent · math · vanilla"
    assert [a.text for a in page.one("nav").children] == ["all jobs"]
    assert len(page.one("table", id="episodes").children[1].children) == 1


def test_viewer_episode_page_shows_the_record_as_text(site):
    path = next((site / "episodes").rglob("00000-t0-r0.html"))
    page = _read(path)
    _no_injection(page, scripts=0)
    assert page.one("h1").text == "t0 correct"
    meta = page.all("dl", class_="meta")[0]
    pairs = dict(zip([e.text for e in meta.children[::2]], [e.text for e in meta.children[1::2]]))
    assert pairs["reward"] == "1.0000" and pairs["tokens"] == "prompt 1,234 · completion 56 · cached –"
    pres = [e.text for e in page.all("pre")]
    assert "system " + HOSTILE in pres and "user " + HOSTILE in pres and "not shown" not in pres
    assert "\n".join([HOSTILE] * 60) in pres           # the long observation, whole ...
    folded = [d for d in page.all("details", class_="fold") if "observation" in d.children[0].text]
    assert folded and "60 lines" in folded[0].children[0].text   # ... and folded
    assert "{bad " + HOSTILE in pres and "cat x" in pres
    assert f'timeout: {json.dumps(HOSTILE)}' in [e.text for e in page.all("div", class_="label")]
    assert page.one("section", class_="turn").attrs["id"] == "turn-0"
    assert [c.text for c in page.all("span", class_="cap")] == ["file", HOSTILE]
    assert [e.attrs["class"] for e in page.all("div") if e.attrs.get("class", "").startswith("call")] == [
        "call failed", "call"]
    assert page.all("dl", class_="meta")[1].children[5].text == json.dumps(HOSTILE)   # extracted
    assert json.dumps({"why": HOSTILE}, ensure_ascii=False, indent=2) in pres             # score details
    assert [a.text for a in page.all("nav")[0].children] == ["all jobs", "this job"]


def test_viewer_episode_without_turns_and_hostile_names(site):
    page = _read(next((site / "episodes").rglob("00000-t2-r0.html")))
    _no_injection(page, scripts=0)
    assert "(no turns)" in [e.text for e in page.all("div", class_="muted")]
    hostile = [p for p in (site / "episodes").rglob("*.html") if "00000-t2" not in p.name and "t0-r0" not in p.name]
    page = _read(hostile[0])
    _no_injection(page, scripts=0)
    assert page.one("h1").text == f"{HOSTILE} wrong"


def test_paper_index_page(tmp_path):
    @dataclass
    class Fig:
        id: str
        number: str
        title: str
        inputs: list = field(default_factory=list)
        sections: list = field(default_factory=list)
        notes: list = field(default_factory=list)
        waiting: str = ""

    tables = [Table("t1", "Table 1", "Cells " + HOSTILE, ["a", "b " + HOSTILE],
                    [[HOSTILE, Cell("50.0", href="trajectories/jobs/x.html?a=1&b=2")]], notes=["note " + HOSTILE],
                    inputs=["data/a.json"], sections=["jobs"], paper="paper " + HOSTILE),
              Table("t2", "Table 2", "Waits", ["a"], [], waiting="waits for " + HOSTILE)]
    figures = [Fig("f1", "Figure 1", "Grid " + HOSTILE, inputs=["data/a.json"], sections=["jobs"], notes=[HOSTILE]),
               Fig("f2", "Figure 2", "Later", waiting="waits " + HOSTILE)]
    image = {"image": {"tag": "lis-sandbox:x", "size_mb": 1000.0, "inside": {"libraries": {"numpy": "2"}}}}
    write_index(tmp_path, title="Paper " + HOSTILE, profile="smoke", git={"commit": "0123456789abcdef", "dirty": False},
                image_manifest=image, tables=tables, figures=figures, hashes={"data/a.json": "a" * 64},
                section_hashes={"jobs": "j"}, params_hash="p" * 20,
                timings=[{"stage": "eval", "what": HOSTILE, "wall_s": 1.5, "file": "f"}],
                viewer="trajectories/index.html")
    page = _read(tmp_path / "index.html")
    _no_injection(page, scripts=0)
    assert page.one("title").text == "Paper " + HOSTILE and page.one("h1").text == "Paper " + HOSTILE
    assert [(a.attrs["href"], a.text) for a in page.one("nav").children] == [
        ("#f1", "Figure 1"), ("#f2", "Figure 2"), ("#t1", "Table 1"), ("#t2", "Table 2")]
    prov = page.all("p", class_="prov")[0]
    assert [a.attrs["href"] for a in prov.children if a.tag == "a"] == [
        "index.md", "index.json", "trajectories/index.html"]
    assert "commit 0123456789ab · params hash pppppppppppp" in prov.text
    f1 = page.one("section", id="f1")
    assert f1.children[0].text == "Figure 1. Grid " + HOSTILE
    assert [c.tag for c in f1.children] == ["h2", "img", "p", "details"] and f1.children[1].attrs["src"] == "figures/f1.png"
    assert f1.children[2].text == HOSTILE  # the notes, then the provenance folded away
    assert "inputs: data/a.json (aaaaaaaaaaaa) · params: jobs" in f1.children[3].text
    assert [c.text for c in page.one("section", id="f2").children if c.tag == "p"][0] == "waits " + HOSTILE
    t1 = page.one("section", id="t1")
    assert [th.text for th in t1.children[1].children[0].children[0].children[0].children] == ["a", "b " + HOSTILE]
    tds = t1.children[1].children[0].children[1].children[0].children
    assert tds[0].text == HOSTILE and tds[1].children[0].attrs["href"] == "trajectories/jobs/x.html?a=1&b=2"
    assert [li.text for li in t1.children[2].children] == ["paper " + HOSTILE, "note " + HOSTILE]
    summary = t1.children[3].children[0]
    assert [a.attrs["href"] for a in summary.children if a.tag == "a"] == ["tables/t1.md", "tables/t1.csv", "tables/t1.tex"]
    t2 = page.one("section", id="t2")
    assert [c.tag for c in t2.children] == ["h2", "p", "details"] and t2.children[1].text == "waits for " + HOSTILE
    facts = {tr.children[0].text: tr.children[1].text for tr in page.one("section", id="image").children[1].children}
    assert facts["tag"] == "lis-sandbox:x" and facts["libraries"] == "numpy 2"
    timing = page.one("section", id="timings").children[1].children[1]
    assert [td.text for td in timing.children] == ["eval", HOSTILE, "1.5"]
    folded = page.one("section", id="inputs").children[0]
    assert folded.tag == "details" and folded.children[1].children[1].children[1].text == "a" * 64


def test_the_index_leads_with_what_the_run_shows(tmp_path):
    """The learning check and the training curves come first (in both pages); the rest follows as before."""
    from lis.report.figures import Figure
    from lis.report.index import write_index
    from lis.report.tables import Table

    tables = [Table("table2_main", "Table 2", "Main", ["a"], [["0.0"]]),
              Table("learning_check", "Learning check", "Held-out", ["a"], [["+50"]],
                    notes=["Verdict: grpo-files beats sft", "Start: how to read it"])]
    figures = [Figure("figure1_grid", "Figure 1", "Grid"), Figure("training_curves", "Training curves", "GRPO")]
    write_index(tmp_path, title="Paper", profile="smoke", git={"commit": "0123456789abcdef", "dirty": False},
                image_manifest={}, tables=tables, figures=figures, hashes={}, section_hashes={}, params_hash="p" * 20,
                timings=[])
    page = _read(tmp_path / "index.html")
    lead = page.one("div", class_="lead")
    assert [c.attrs.get("id") for c in lead.children if c.tag == "section"] == ["learning_check", "training_curves"]
    assert [a.attrs["href"] for a in page.one("nav").children][:2] == ["#learning_check", "#training_curves"]
    md = (tmp_path / "index.md").read_text()
    shows, rest = md.split("## What this run shows", 1)[1].split("## Tables", 1)
    assert "Verdict: grpo-files beats sft" in shows and "Start: how to read it" not in shows
    assert "![Training curves](figures/training_curves.png)" in shows
    assert rest.index("## Provenance") > rest.index("## Figures")  # the inputs come after the results


def test_environment_escapes_and_is_strict():
    env = environment()
    assert env.from_string("{{ x }}").render(x="<b>&") == "&lt;b&gt;&amp;"
    assert render("viewer/macros.html.j2").strip() == ""    # macros only
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ x }}").render()
    with pytest.raises(jinja2.UndefinedError):
        render("viewer/job.html.j2", title="t")
    assert FOLD_CHARS == 2000


def test_templates_are_package_data():
    names = {p.name for p in resources.files("lis.report").joinpath("templates").iterdir()}
    assert {"index.html.j2", "index.css", "viewer"} <= names
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["lis"]
    assert "report/templates/**/*" in globs

"""Records of the wrong shape that reached deep code (issue 26, findings 6 and 7): each is now one
refusal line (status 2) or a skipped row with a warning, never "a bug in lis" and never a silent
number."""
from __future__ import annotations

import json

from tests.conftest import lis, one_line_error

EPISODE = {"task_id": "t1", "model": "m", "mode": "sandbox", "domain": "math", "termination": "submitted",
           "reward": 1.0, "score": {"scorer": "math_verify"}, "answer": "4", "steps": [
               {"index": 0, "content": None, "calls": [{"id": "c1", "tool": "execute_bash",
                                                        "arguments": {"command": "ls"}, "observation": "Exit code: 0",
                                                        "exit_code": 0, "exec_time_s": 0.1}]}]}


def _jsonl(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_behaviour_refuses_an_object_termination_in_one_line(tmp_path):
    bad = _jsonl(tmp_path / "t.jsonl", EPISODE, {**EPISODE, "task_id": "t2", "termination": {"x": 1}})
    r = lis(["lis", "behaviour", "analyse", str(bad), "--out", str(tmp_path / "o.json")], check=False)
    one_line_error(r, "t.jsonl line 2: field termination")


def test_the_viewer_skips_a_string_score_or_calls_that_are_not_objects(tmp_path):
    f = _jsonl(tmp_path / "t.jsonl", EPISODE, {**EPISODE, "task_id": "t2", "score": "1.0"},
               {**EPISODE, "task_id": "t3", "steps": [{"index": 0, "calls": ["ls"]}]})
    r = lis(["lis", "view", str(f), "--out", str(tmp_path / "site")], check=False)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "t.jsonl:2: field score" in r.stderr and "t.jsonl:3: field steps.0.calls.0" in r.stderr, r.stderr
    pages = [p.name for p in (tmp_path / "site").rglob("*.html") if p.name != "index.html"]
    assert any("t1" in p for p in pages) and not any("t2" in p or "t3" in p for p in pages), pages


def test_the_summary_refuses_a_text_n_and_a_750_percent_accuracy(tmp_path):
    job = tmp_path / "eval/m/math/sandbox"
    job.mkdir(parents=True)
    metrics = {"model": "m", "domain": "math", "mode": "sandbox", "n": 64, "scored": 64, "accuracy": 0.5,
               "ci95": [0.4, 0.6], "errors": 0}
    for change, field in (({"n": "64"}, "field n"), ({"accuracy": 7.5}, "field accuracy")):
        (job / "metrics.json").write_text(json.dumps({**metrics, **change}))
        r = lis(["lis", "eval", "summary", "--root", str(tmp_path / "eval")], check=False)
        one_line_error(r, "metrics.json is not a job's metrics", field)
    (job / "metrics.json").write_text(json.dumps(metrics))
    r = lis(["lis", "eval", "summary", "--root", str(tmp_path / "eval")], env={"COLUMNS": "200"})
    assert "50.0" in r.stdout


def test_efficiency_refuses_a_nan_time_instead_of_writing_nan(tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text(json.dumps(EPISODE) + "\n" + json.dumps({**EPISODE, "task_id": "t2"}).replace(
        '"reward": 1.0', '"reward": 1.0, "wall_s": NaN') + "\n")
    r = lis(["lis", "efficiency", "tokens", str(f), "--out", str(tmp_path / "e.json")], check=False)
    one_line_error(r, "t.jsonl line 2", "not valid JSON (NaN")
    assert not (tmp_path / "e.json").exists()

"""`lis eval run` over a task file with hostile rows: each bad row is one error record naming its line and
field, and the job goes on with the good ones (it used to stop at a lone surrogate or a deep row, and
to take a null id, a repeated id, a list as gold, another domain or a document path with `..` without a
word)."""
from __future__ import annotations

import json

import yaml

from tests.conftest import lis

GOOD = {"domain": "math", "problem_statement": "What is 2+2?", "ground_truth": "4"}


def test_bad_task_rows_are_errors_and_the_job_goes_on(repo_copy):
    rows = [
        json.dumps({**GOOD, "id": "good1"}),
        json.dumps({**GOOD, "id": "surrogate", "problem_statement": "odd \udcff text, 2+2?"}),  # a lone surrogate
        '{"id": "deep", "domain": "math", "problem_statement": "x", "ground_truth": "4", "meta": '
        + "[" * 5000 + "]" * 5000 + "}",
        json.dumps({**GOOD, "id": None}),
        json.dumps({**GOOD, "id": "good1", "problem_statement": "a second row with the same id"}),
        json.dumps({**GOOD, "id": "listgold", "ground_truth": ["4"]}),
        json.dumps({**GOOD, "id": "otherdomain", "domain": "biomed"}),
        json.dumps({**GOOD, "id": "escape", "input_files": {"../../etc/cron.d/x": "boom"}}),
        json.dumps({**GOOD, "id": "good2"}),
    ]
    (repo_copy / "data/tasks").mkdir(parents=True, exist_ok=True)
    (repo_copy / "data/tasks/math.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    params = yaml.safe_load((repo_copy / "params.yaml").read_text())
    params["models"]["answers"] = {"backend": "scripted", "replies": ["\\boxed{4}"] * 10}
    params["eval"]["max_error_share"] = 1.0
    (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    r = lis(["lis", "eval", "run", "--model", "answers", "--domain", "math", "--mode", "vanilla", "--profile", "ci",
             "--workers", "1"], cwd=repo_copy, check=False)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    out = repo_copy / "data/eval/answers/math/vanilla"
    recs = {json.loads(x)["task_id"]: json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()}
    m = json.loads((out / "metrics.json").read_text())
    assert {k for k, v in recs.items() if v["reward"] == 1.0} == {"good1", "good2", "surrogate"}, recs.keys()
    errors = {k: v["error"] for k, v in recs.items() if v["termination"] == "error"}
    assert len(errors) == 6 and m["errors"] == 6 and m["n"] == 9, (errors, m)
    joined = " | ".join(errors.values())
    for needle in ("line 3", "nested too deep", "line 4: field id", "line 5: task id 'good1' repeats",
                   "line 6: field ground_truth", "line 7: a biomed task in the math job",
                   "line 8: field input_files"):
        assert needle in joined, (needle, errors)

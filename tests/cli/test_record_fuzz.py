"""The record fuzz suite (issue 26): for every record type (task, trajectory with its steps and calls,
metrics) and every field of its model (lis/records.py), hostile values — the wrong type, NaN, infinity,
a negative number, 5,000 levels of nesting, a lone surrogate, a 2 MB string, null — each in an
otherwise valid file (a row file also gets its first row twice), through every command that reads that record. The rule for every case:

- never "a bug in lis", never a traceback, never over 30 s;
- exit 0 only when nothing was refused with an `error:` line (a tolerant reader — `lis eval run`, `lis
  view` — may take the row as valid, or record it as an error and go on); a refusal is one line, exit 2.

The cases are generated from the models, so a field added to a record is fuzzed without a list to edit.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from lis.agent.trajectory import Step, ToolCallRecord, Trajectory
from lis.records import MetricsRecord, record_model
from lis.tasks.schema import Task

TaskRecord, TrajectoryRecord, StepRecord, CallRecord = map(record_model, (Task, Trajectory, Step, ToolCallRecord))
from tests.cli.test_fuzz import CASE_S, run_case
from tests.conftest import ROOT, copy_repo

pytestmark = [pytest.mark.slow]

DEEP = "@@DEEP@@"
HOSTILE: dict[str, Any] = {"a list": [1], "an object": {"x": 1}, "text": "x", "NaN": math.nan, "infinity": math.inf,
                           "negative": -1, "deep nesting": DEEP, "a lone surrogate": "odd \udcff", "null": None,
                           "a 2 MB string": "x" * (2 << 20)}

TASK = {"id": "t1", "domain": "math", "problem_statement": "What is 2+2?", "ground_truth": "4", "input_files": {},
        "qa_type": None, "meta": {}}
CALL = {"id": "c1", "tool": "execute_bash", "arguments": {"command": "ls"}, "raw_arguments": None,
        "observation": "Exit code: 0", "exit_code": 0, "exec_time_s": 0.1, "error": None, "timed_out": False,
        "observation_chars": 12}
STEP = {"index": 0, "content": None, "reasoning": None, "calls": [CALL], "llm_latency_s": 0.2, "prompt_tokens": 10,
        "completion_tokens": 5, "cached_tokens": 0, "finish_reason": "tool_calls", "text_tool_calls": False,
        "completion_ids": None, "logprobs": None, "invalid_text": 0, "reply_cut": 0}
TRAJ = {"task_id": "t1", "model": "m", "mode": "sandbox", "domain": "math", "seed": 1, "repeat": 0, "run_id": "r",
        "params_hash": "", "image": "", "backend": "docker", "messages": [{"role": "user", "content": "hi"}],
        "steps": [STEP], "answer": "4", "termination": "submitted", "error": None, "reward": 1.0,
        "score": {"scorer": "math_verify", "extracted": "4", "details": {}}, "started_utc": "2026-11-27T10:00:00+00:00",
        "wall_s": 1.0, "llm_s": 0.2, "env_s": 0.1, "sandbox_start_s": 0.3, "acquire_wait_s": 0.0, "prompt_tokens": 10,
        "completion_tokens": 5, "cached_tokens": 0, "turns": 1, "episode_id": "e1", "task_hash": "h", "attempt": 1,
        "invalid_text": 0, "schema_version": 2}
METRICS = {"model": "m", "domain": "math", "mode": "sandbox", "n": 2, "expected": 2, "items": 2, "scored": 2,
           "accuracy": 0.5, "ci95": [0.0, 1.0], "errors": 0, "error_share": 0.0, "terminations": {"submitted": 2}}


def _paths(model, good: dict, prefix: tuple = ()) -> Iterator[tuple]:
    """Every field path of a record: the model's own fields, and those of its steps and calls."""
    for name in model.model_fields:
        yield (*prefix, name)
    if model is TrajectoryRecord:
        yield from _paths(StepRecord, good["steps"][0], ("steps", 0))
    if model is StepRecord:
        yield from _paths(CallRecord, good["calls"][0], (*prefix, "calls", 0))


def _set(record: dict, path: tuple, value: Any) -> dict:
    out = json.loads(json.dumps(record))
    node = out
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return out


def _line(record: dict) -> str:
    text = json.dumps(record)  # NaN, Infinity and "\udcff" written as Python writes them
    return text.replace(json.dumps(DEEP), "[" * 5000 + "]" * 5000)


FIRST_ID = {TaskRecord: "id", TrajectoryRecord: "task_id"}  # the key of the valid first row, whose id is "t0"


def variants(model, good: dict) -> Iterator[tuple[str, str]]:
    for path in _paths(model, good):
        for label, value in HOSTILE.items():
            yield f"{'.'.join(map(str, path))} = {label}", _line(_set(good, path, value))
    if model in FIRST_ID:  # a duplicate: the file's valid first row again
        yield "the first record twice", _line({**good, FIRST_ID[model]: "t0"})


RECORDS = {"task": (TaskRecord, TASK), "trajectory": (TrajectoryRecord, TRAJ), "metrics": (MetricsRecord, METRICS)}


def _project(root: Path) -> Path:
    repo = copy_repo(root / "repo")
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["models"]["answers"] = {"backend": "scripted", "replies": ["\\boxed{4}"] * 10}
    params["eval"]["max_error_share"] = 1.0
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return repo


def commands(kind: str, repo: Path, line: str, n: int) -> Iterator[tuple[str, list[str]]]:
    """(name, argv) of every command that reads a ``kind`` record, its input written with ``line``."""
    case = repo / "cases" / str(n)
    case.mkdir(parents=True, exist_ok=True)
    if kind == "task":
        good = json.dumps({**TASK, "id": "t0"})
        (case / "math.jsonl").write_text(good + "\n" + line + "\n", encoding="utf-8")
        (case / "task.json").write_text(line, encoding="utf-8")
        (case / "response.txt").write_text("\\boxed{4}", encoding="utf-8")
        yield "eval run", ["eval", "run", "--model", "answers", "--domain", "math", "--mode", "vanilla", "--profile",
                           "ci", "--tasks", str(case / "math.jsonl"), "--out", str(case / "out"), "--workers", "1"]
        yield "score --task-json", ["score", "--task-json", str(case / "task.json"), "--response",
                                    str(case / "response.txt")]
        return
    job = case / "eval/m/math/sandbox"
    job.mkdir(parents=True, exist_ok=True)
    if kind == "trajectory":
        (job / "trajectories.jsonl").write_text(json.dumps({**TRAJ, "task_id": "t0"}) + "\n" + line + "\n",
                                                encoding="utf-8")
        (job / "metrics.json").write_text(json.dumps(METRICS))
        yield "view", ["view", str(job), "--out", str(case / "site")]
        yield "behaviour analyse", ["behaviour", "analyse", str(job / "trajectories.jsonl"), "--out", str(case / "b.json")]
        yield "efficiency tokens", ["efficiency", "tokens", str(job / "trajectories.jsonl"), "--out", str(case / "e.json")]
        yield "export inspect", ["export", "inspect", str(job), "--out", str(case / "logs")]
    else:
        (job / "trajectories.jsonl").write_text(json.dumps(TRAJ) + "\n", encoding="utf-8")
        (job / "metrics.json").write_text(line, encoding="utf-8")
        yield "eval summary", ["eval", "summary", "--root", str(case / "eval")]
        yield "export inspect", ["export", "inspect", str(job), "--out", str(case / "logs")]


def broken(kind: str, repo: Path) -> tuple[int, list[str]]:
    """(cases run, those that broke the rule, described)."""
    model, good = RECORDS[kind]
    bad, n = [], 0
    for i, (label, line) in enumerate(variants(model, good)):
        for name, args in commands(kind, repo, line, i):
            n += 1
            code, err, took = run_case(repo, args)
            errors = [x for x in err.splitlines() if x.startswith("error:")]
            wrong = (code not in (0, 2) or "a bug in lis" in err or "Traceback" in err or "TIMEOUT" in err
                     or (code == 0 and errors) or (code == 2 and len(errors) != 1))
            if wrong:
                bad.append(f"{kind} {label} → lis {name}: exit {code} after {took:.1f} s: {err.strip()[-300:]}")
    return n, bad


@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_every_hostile_field_ends_in_a_refusal_line_or_a_kept_row(kind, tmp_path):
    repo = _project(tmp_path)
    r = subprocess.run([sys.executable, "-m", "tests.cli.test_record_fuzz", kind, str(repo)], cwd=ROOT,
                       capture_output=True, text=True, timeout=CASE_S * 400 + 120)
    assert r.returncode == 0 and r.stdout.strip(), f"the runner failed: {r.stdout[-2000:]}{r.stderr[-3000:]}"
    n, bad = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"MEASURED record fuzz: {kind}: {n} cases")
    assert n >= 40, n
    assert not bad, f"{len(bad)} of {n} case(s) broke the rule:\n" + "\n".join(bad[:30])


if __name__ == "__main__":  # python -m tests.cli.test_record_fuzz KIND REPO
    print(json.dumps(broken(sys.argv[1], Path(sys.argv[2]))))

"""Same seed, same trajectories: `lis eval run` of a local model in sandbox mode, twice, with
eval.deterministic on: every episode's messages, tool calls, observations, sampled ids and
log-probabilities (which this mode records) are equal; only times and run identifiers differ.

12 lookup tasks, the tiny agent at temperature 1.0 (each episode seeded), 4 workers sharing one
batch engine, real Docker sandboxes. With the mode off, which turns share a forward pass depends on
when each tool call returns; docs/training-determinism.md describes the drift it causes."""
from __future__ import annotations

import json
import shutil

import pytest
import yaml

from tests.conftest import run
from tests.train.test_grpo import lookup_task

pytestmark = [pytest.mark.slow]

VARYING = {"run_id", "params_hash", "started_utc", "wall_s", "llm_s", "env_s", "sandbox_start_s", "acquire_wait_s",
           "episode_id", "model"}
STEP_VARYING = {"llm_latency_s"}
CALL_VARYING = {"exec_time_s"}


def _stable(rec: dict) -> dict:
    out = {k: v for k, v in rec.items() if k not in VARYING}
    out["steps"] = [{**{k: v for k, v in s.items() if k not in STEP_VARYING},
                     "calls": [{k: v for k, v in c.items() if k not in CALL_VARYING} for c in s["calls"]]}
                    for s in rec["steps"]]
    return out


def test_a_deterministic_sandbox_evaluation_repeats_its_trajectories(repo_copy, tiny_dir, docker_client):
    shutil.copytree(tiny_dir, repo_copy / "data/models/agent")
    (repo_copy / "data/tasks").mkdir(parents=True, exist_ok=True)
    (repo_copy / "data/tasks/instruct_pretrain.jsonl").write_text(
        "".join(json.dumps(lookup_task(i, 300 + 7 * i).to_dict()) + "\n" for i in range(12)))
    path = repo_copy / "params.yaml"
    data = yaml.safe_load(path.read_text())
    entry = {"backend": "local", "path": "data/models/agent", "sampling": {"temperature": 1.0, "max_tokens": 96}}
    data["models"].update({"agent-a": entry, "agent-b": entry})
    data["eval"].update(workers=4, deterministic=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    runs = {}
    for name in ("agent-a", "agent-b"):
        run(["lis", "eval", "run", "--model", name, "--domain", "instruct_pretrain", "--mode", "sandbox", "--profile",
             "ci", "--workers", "4"], cwd=repo_copy, env={"LIS_RUN_ID": "pytest-same-seed-eval"}, timeout=900)
        folder = repo_copy / f"data/eval/{name}/instruct_pretrain/sandbox"
        runs[name] = [json.loads(x) for x in (folder / "trajectories.jsonl").read_text().splitlines()]
        m = json.loads((folder / "metrics.json").read_text())
        assert m["n"] == 12 and m["errors"] == 0, m
        assert m["deterministic"]["mode"] is True
    a, b = runs["agent-a"], runs["agent-b"]
    assert sum(len(s["calls"]) for r in a for s in r["steps"]) > 0  # the agent used its sandboxes
    assert all(s["completion_ids"] and s["logprobs"] for r in a for s in r["steps"])  # recorded in this mode
    for ra, rb in zip(a, b):
        assert _stable(ra) == _stable(rb), ra["task_id"]
    left = docker_client.api.containers(all=True, filters={"label": ["lis.run=pytest-same-seed-eval"]})
    assert not left, f"{len(left)} sandbox(es) left behind"

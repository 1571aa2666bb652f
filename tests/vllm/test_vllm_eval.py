"""`lis eval run` through a real vLLM server started by ``serve.auto``, in both modes, in real sandboxes; and the
same weights, greedy, through vLLM and through the local backend: the same tool calls, answers and scores.

vLLM parses the tool calls here (its hermes parser, the server side); the local backend parses them with
lis's own parser (lis/models/toolcalls.py)."""
from __future__ import annotations

import json

import pytest
import yaml

from lis.util.server_process import healthy
from tests.conftest import copy_repo, run
from tests.serve.server import free_port
from tests.vllm.conftest import served_entry

pytestmark = [pytest.mark.slow, pytest.mark.docker]


@pytest.fixture(scope="module")
def repo(tmp_path_factory, vllm_model_dir, vllm_server):
    repo = copy_repo(tmp_path_factory.mktemp("vllm-repo"))
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["models"]["cold-vllm"] = served_entry(vllm_model_dir, free_port(), "cold-vllm")   # the eval starts it
    params["models"]["tiny-vllm"] = vllm_server.entry                                       # answers already
    params["models"]["tiny-local"] = {"backend": "local", "path": str(vllm_model_dir),
                                      "sampling": {"temperature": 0.0, "max_tokens": 192}}
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    for domain in ("instruct_pretrain", "math"):
        run(["lis", "tasks", "--domain", domain, "--profile", "ci", "--out", f"data/tasks/{domain}.jsonl"], cwd=repo)
    run(["lis", "image", "build", "--profile", "ci", "--out", "data/image/manifest.json"], cwd=repo)
    return repo, params["models"]


def evaluate(repo, model, domain, mode, limit=None) -> tuple[dict, list[dict]]:
    out = f"data/eval/{model}/{domain}/{mode}"
    cmd = ["lis", "eval", "run", "--model", model, "--domain", domain, "--mode", mode, "--profile", "ci",
           "--out", out, "--workers", "4"]
    run(cmd + (["--limit", str(limit)] if limit else []), cwd=repo, timeout=900)
    rows = [json.loads(x) for x in (repo / out / "trajectories.jsonl").read_text().splitlines()]
    return json.loads((repo / out / "metrics.json").read_text()), sorted(rows, key=lambda r: (r["task_id"], r["repeat"]))


def behaviour(row: dict) -> dict:
    """What the comparison looks at: each assistant turn's tool calls (name, arguments), the answer, the score."""
    calls = [[(c["function"]["name"], json.loads(c["function"]["arguments"]))
              for c in m.get("tool_calls") or []] for m in row["messages"] if m["role"] == "assistant"]
    return {"task": row["task_id"], "calls": calls, "answer": row["answer"], "reward": row["reward"],
            "termination": row["termination"]}


def test_a_sandbox_eval_starts_vllm_through_serve_auto_and_stops_it(repo):
    repo, models = repo
    health = models["cold-vllm"]["base_url"][:-3] + "/health"
    assert not healthy(health)
    m, rows = evaluate(repo, "cold-vllm", "instruct_pretrain", "sandbox", limit=4)
    assert m["n"] == 4 and m["errors"] == 0 and m["scored"] == 4, m
    assert sum(r["turns"] for r in rows) >= 4 and all(r["completion_tokens"] > 0 for r in rows)
    # --enable-prompt-tokens-details: the prefix cache's hits are reported (turns share the system prompt)
    assert sum(r["cached_tokens"] for r in rows) > 0, [r["cached_tokens"] for r in rows]
    log = (repo / "logs/serve/cold-vllm.log").read_text()
    assert "vllm" in log.lower() and "lis starts:" in log
    assert not healthy(health), "the vLLM server the eval started outlived it"


@pytest.mark.parametrize("domain,mode", [("instruct_pretrain", "sandbox"), ("math", "vanilla")])
def test_greedy_through_vllm_equals_the_local_backend(repo, domain, mode):
    repo, _ = repo
    mv, via_vllm = evaluate(repo, "tiny-vllm", domain, mode)
    ml, local = evaluate(repo, "tiny-local", domain, mode)
    assert mv["errors"] == ml["errors"] == 0 and mv["n"] == ml["n"] == len(local) > 0
    if mode == "sandbox":
        assert sum(len(t) for r in via_vllm for t in behaviour(r)["calls"]) > 0, "no tool call to compare"
    differ = [(a["task"], a, b) for a, b in map(lambda r: (behaviour(r[0]), behaviour(r[1])), zip(via_vllm, local))
              if a != b]
    assert not differ, differ[:2]
    assert mv["accuracy"] == ml["accuracy"]

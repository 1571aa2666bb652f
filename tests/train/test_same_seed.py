"""Same seed, same model: a short GRPO run twice in the deterministic rollout mode
(grpo.rollout.deterministic) gives the same weights, the same step log and the same episodes.

3 steps of 2 groups of 4 episodes, the tiny agent in real sandboxes. The step log's
``episodes_sha256`` is a hash of every episode's token ids and mask (the sampled ids, the
observations' ids), in batch order: equal logs mean equal trajectories, token for token. With the
mode off the runs drift apart (docs/training-determinism.md: described there, not asserted here,
since a short run can also come out equal by chance)."""
from __future__ import annotations

import csv
import json

import pytest

from lis.train.grpo.columns import TIME_COLUMNS
from lis.util.files import sha256_file
from tests.conftest import run
from tests.train.test_grpo import _grpo_repo

pytestmark = [pytest.mark.slow, pytest.mark.training]


def _log(path):
    rows = list(csv.DictReader(path.read_text().splitlines()))
    return [{k: v for k, v in r.items() if k not in TIME_COLUMNS} for r in rows]


def test_a_deterministic_grpo_run_repeats_bit_for_bit(repo_copy, tiny_dir, docker_client):
    _grpo_repo(repo_copy, tiny_dir, steps=3, save_every=10, prompts_per_step=2, samples_per_prompt=4, threads=1,
               rollout={"deterministic": True})
    for name in ("a", "b"):
        run(["lis", "train", "grpo", "--init", "data/models/sft", "--data", "files", "--out", f"data/models/grpo-{name}",
             "--logs", f"data/train/runs/grpo-{name}", "--profile", "ci"], cwd=repo_copy,
            env={"LIS_RUN_ID": "pytest-same-seed"}, timeout=900)
    a, b = (repo_copy / "data/models/grpo-a", repo_copy / "data/models/grpo-b")
    log_a, log_b = (_log(repo_copy / f"data/train/runs/grpo-{n}/train_log.csv") for n in ("a", "b"))
    assert len(log_a) == 3 and all(len(r["task_ids"].split(";")) == 2 for r in log_a)
    assert any(float(r["tool_calls_mean"]) > 0 for r in log_a)  # the episodes used their sandboxes
    for ra, rb in zip(log_a, log_b):  # step by step first: a mismatch names its step and column
        assert ra == rb, {k: (ra[k], rb[k]) for k in ra if ra[k] != rb[k]}
    assert sha256_file(a / "model.safetensors") == sha256_file(b / "model.safetensors")
    m = json.loads((repo_copy / "data/train/runs/grpo-a/metrics.json").read_text())
    assert m["deterministic"]["mode"] is True
    d = m["deterministic"]
    assert d["reproducible"] is (d["wall_clock_limited_episodes"] == 0 and d["unordered_output_episodes"] == 0)  # ordered output does not count (stderr_order)
    left = docker_client.api.containers(all=True, filters={"label": ["lis.run=pytest-same-seed"]})
    assert not left, f"{len(left)} sandbox(es) left behind"

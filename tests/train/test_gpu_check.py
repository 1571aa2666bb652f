"""scripts/gpu_check.py, the GPU checks, run as their own CPU self-test: every check runs and reports
(engine parity, GRPO steps with the sampler-trainer checks, Lightning SFT), so the script a lent GPU
runs has run here first."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.training]


def test_gpu_check_runs_every_check_on_the_cpu(tmp_path):
    out = tmp_path / "check.json"
    r = subprocess.run([sys.executable, "scripts/gpu_check.py", "--device", "cpu", "--out", str(out),
                        "--grpo-steps", "2", "--sft-steps", "10"], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(out.read_text())
    eng = res["engine"]
    assert eng["greedy_ids_equal"] == eng["prompts"] == eng["sampled_ids_equal"]  # CPU vs CPU: identical
    assert eng["device_logprobs_vs_cpu_recompute_max_abs"] < 1e-4
    steps = res["grpo"]["per_step"]
    assert [s["step"] for s in steps] == [1, 2] and all(s["loss_calls_eval_mode"] == 0 for s in steps)
    assert all(s["logprob_diff_max"] < 1e-4 for s in steps), steps
    assert res["sft"]["steps_done"] == 10 and res["sft"]["loss"]["final"] < res["sft"]["loss"]["first"]


def test_the_paper_shape_check_runs_its_code_on_the_cpu_with_a_small_shape(tmp_path):
    """`scripts/gpu-check.sh paper`'s code (random model of a shape, the paper's 8 x 8 GRPO steps in
    vanilla mode, peak memory against `lis train plan`, tokens/s) on the CPU with the rehearsal's shape,
    so the check a lent GPU runs has run here first. The numbers are not judged (CPU RSS is a whole
    process's), only that every one is reported."""
    out = tmp_path / "paper.json"
    r = subprocess.run([sys.executable, "scripts/gpu_check.py", "--device", "cpu", "--paper", "--out", str(out),
                        "--config", "data/model_configs/qwen3-rehearsal.json", "--prompt-tokens", "512",
                        "--completion-tokens", "16"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    p = json.loads(out.read_text())["paper"]
    assert p["steps"] == 2 and p["episodes_per_step"] == 64 and p["completion_tokens"] == 16, p
    assert 400 <= p["prompt_tokens"] <= 600 and p["peak_allocated_gb"] > 0 and p["peak_over_plan"] > 0, p
    assert len(p["generation_tokens_per_s"]) == 2 and all(x > 0 for x in p["training_tokens_per_s"]), p
    assert all(s["loss_calls_eval_mode"] == 0 for s in p["per_step"]), p["per_step"]

"""scripts/gpu_check.py, the GPU checks, run as their own CPU self-test at the smallest shapes that still run
every check (engine parity, GRPO steps with the sampler-trainer checks, Lightning SFT; the paper-shape check's
8 x 8 GRPO steps), so the script a lent GPU runs has run here first. `lis bench all` runs both at the
larger shapes (its ``gpu-check``) with the same checks (lis/bench/standard.py)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lis.bench.standard import paper_checks, self_test_checks
from tests.conftest import ROOT

pytestmark = [pytest.mark.training]

SELF_TEST = ["--grpo-steps", "2", "--grpo-group", "2x4", "--sft-steps", "4", "--engine-prompts", "2",
             "--engine-tokens", "16", "--corpus-episodes", "20"]
PROMPT, COMPLETION = 160, 16


def gpu_check(tmp_path, args: list[str]) -> dict:
    out = tmp_path / "check.json"
    r = subprocess.run([sys.executable, "scripts/gpu_check.py", "--device", "cpu", "--out", str(out), *args],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return {**json.loads(out.read_text()), "exit_status": r.returncode}


def test_gpu_check_runs_every_check_on_the_cpu(tmp_path):
    res = gpu_check(tmp_path, SELF_TEST)
    eng = res["engine"]
    assert eng["greedy_ids_equal"] == eng["prompts"] == eng["sampled_ids_equal"] == 2  # CPU vs CPU: identical
    assert eng["device_logprobs_vs_cpu_recompute_max_abs"] < 1e-4
    steps = res["grpo"]["per_step"]
    assert [s["step"] for s in steps] == [1, 2] and all(s["loss_calls_eval_mode"] == 0 for s in steps)
    assert all(s["logprob_diff_max"] < 1e-4 for s in steps), steps
    assert res["sft"]["steps_done"] == 4 and res["sft"]["loss"]["final"] < res["sft"]["loss"]["first"]
    bad = [c for c in self_test_checks(res, 2, 4) if not c["ok"]]
    assert not bad, bad


def test_the_paper_shape_check_runs_its_code_on_the_cpu_with_a_small_shape(tmp_path):
    """`scripts/gpu-check.sh paper`'s code (random model of a shape, the paper's 8 x 8 GRPO steps in
    vanilla mode, peak memory against `lis train plan`, tokens/s) on the CPU with the rehearsal's shape
    and short prompts. The numbers are not judged (CPU RSS is a whole process's), only that every one
    is reported."""
    res = gpu_check(tmp_path, ["--paper", "--config", "data/model_configs/qwen3-rehearsal.json",
                               "--prompt-tokens", str(PROMPT), "--completion-tokens", str(COMPLETION)])
    p = res["paper"]
    assert p["steps"] == 2 and p["episodes_per_step"] == 64 and p["completion_tokens"] == COMPLETION, p
    assert 0.78 * PROMPT <= p["prompt_tokens"] <= 1.17 * PROMPT and p["peak_allocated_gb"] > 0, p
    assert p["peak_over_plan"] > 0, p
    assert len(p["generation_tokens_per_s"]) == 2 and all(x > 0 for x in p["training_tokens_per_s"]), p
    assert all(s["loss_calls_eval_mode"] == 0 for s in p["per_step"]), p["per_step"]
    bad = [c for c in paper_checks(res, PROMPT, COMPLETION) if not c["ok"]]
    assert not bad, bad

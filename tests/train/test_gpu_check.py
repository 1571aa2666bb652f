"""scripts/gpu_check.py, the GPU checks, run as their own CPU self-test: every check runs and reports
(engine parity, GRPO steps with the sampler-trainer checks, Lightning SFT), so the script a lent GPU
runs has run here first."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT


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

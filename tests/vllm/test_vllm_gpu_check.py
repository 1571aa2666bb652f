"""The vLLM step of `scripts/gpu-check.sh paper` (scripts/gpu_check.py ``vllm_step``), run here on the CPU build at
a small shape: throughput of both engines, the bf16 server's log-probs against the float32 trainer, a weight push."""
from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.slow]


def test_the_gpu_checks_vllm_step_runs_on_the_cpu_build(tmp_path):
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts/gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    res = gpu_check.vllm_step(tmp_path, "cpu", ROOT / "data/model_configs/qwen3-validate-32m.json", 16, group=8)
    assert res["cpu_build"] is True and "skipped" not in res, res
    g = res["generate"]
    assert g["n"] == 8 and not g["in_process"]["errors"] and not g["vllm"]["errors"], g
    assert g["in_process"]["tokens"] == g["vllm"]["tokens"] == 8 * 16 and g["vllm_over_in_process"] > 0, g
    m = res["mismatch_bf16_vs_fp32"]
    assert m["tokens"] == 4 * 32 and 0 < m["token_abs_diff_max"] < 5, m   # bf16 weights: a real, bounded gap
    assert res["push_s"] > 0

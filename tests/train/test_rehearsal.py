"""The paper-scale rehearsal (`lis train rehearse`, lis/train/rehearsal): the `full` profile's training
settings on a random-init Qwen3 built here, through the real command — 2 SFT steps (LoRA off and on)
and 2 GRPO steps of 8 x 8 episodes in real sandboxes in each of two configurations (in-process
generation, full fine-tuning, no importance sampling; server mode through lis's ChatServer with the
weights pushed before every step, LoRA, sequence_mask importance sampling). Every check the rehearsal
reports must hold; the test also reads the report's numbers itself."""
from __future__ import annotations

import json

import pytest

from lis.params import load
from tests.conftest import ROOT, run

pytestmark = [pytest.mark.docker, pytest.mark.training]


def test_the_full_profile_rehearses_on_a_random_qwen3(tmp_path, image_tag):
    r = run(["lis", "train", "rehearse", "--out", str(tmp_path / "rh"), "--profile", "full"], check=False,
            timeout=1500)
    report = json.loads((tmp_path / "rh" / "report.json").read_text())
    failed = [c for c in report["checks"] if not c["ok"]]
    full = load(ROOT, profile="full").section("grpo")
    assert r.returncode == 0 and report["ok"] and not failed, (failed, r.stderr[-3000:])
    assert report["profile"] == "full" and len(report["checks"]) >= 14
    for name, g in report["grpo"].items():
        s = g["settings"]
        # the paper's settings, as configured
        assert (s["prompts_per_step"], s["samples_per_prompt"], s["micro_batch"]) == (8, 8, 1), s
        assert (s["max_prompt_tokens"], s["max_episode_tokens"], s["loss_agg"]) == (16384, 65536, "seq-mean-token-sum")
        assert (s["clip_low"], s["clip_high"], s["clip_dual"], s["lr"]) == (0.2, 0.28, 3.0, 1e-6), s
        assert s["engine"] == full["engine"] and g["prompts_dropped"] == 0   # the paper's engine budget
        for st in g["steps"]:
            assert st["outcomes"] == {"submitted": 24, "wrong": 16, "policy_fault": 24, "infra_error": 0}, st
            assert st["faults"] == {"turn_budget": 24} and st["malformed_calls"] >= 8, st
    assert report["grpo"]["server-lora"]["server"] and report["grpo"]["server-lora"]["lora_rank"] == 8
    assert report["grpo"]["server-lora"]["importance_sampling"]["mode"] == "sequence_mask"
    assert report["sft"]["lora8"]["parameters"]["trainable"] < report["sft"]["lora0"]["parameters"]["trainable"]
    assert report["sft"]["lora0"]["settings"] == {"batch_size": 4, "max_tokens": 32768}

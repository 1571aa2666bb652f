"""The paper-scale rehearsal (`lis train rehearse`, lis/train/rehearsal), one GRPO step of it: the `full`
profile's training settings on a random-init Qwen3 built here, through the real command, in one
configuration (in-process generation, full fine-tuning, no importance sampling; 8 x 8 episodes in real
sandboxes). Every check the rehearsal reports must hold, and the paper's settings and outcomes
(:func:`lis.train.rehearsal.checks.paper_checks`) too. The whole rehearsal (2 SFT steps, LoRA off and on;
2 GRPO steps in each of two configurations, the second through lis's ChatServer with LoRA and
sequence_mask importance sampling) runs with the same checks in `lis bench all` (its ``rehearsal``);
what those configurations are set to is checked here without running them."""
from __future__ import annotations

import copy
import json

import pytest

from lis.params import load
from lis.train.rehearsal.checks import OUTCOMES, paper_checks
from lis.train.rehearsal.run import CONFIGS, LORA, PARTS, grpo_settings, parts, sft_settings
from lis.errors import LisError
from tests.conftest import ROOT, run

pytestmark = [pytest.mark.docker, pytest.mark.training]


@pytest.fixture(scope="module")
def full():
    return load(ROOT, profile="full")


@pytest.fixture(scope="module")
def one_step(tmp_path_factory, image_tag):
    out = tmp_path_factory.mktemp("rehearsal") / "rh"
    r = run(["lis", "train", "rehearse", "--out", str(out), "--profile", "full", "--only", "grpo:local-full",
             "--steps", "1"], check=False, timeout=900)
    return r, json.loads((out / "report.json").read_text())


def test_one_grpo_step_of_the_full_profile_rehearses_on_a_random_qwen3(one_step, full):
    r, report = one_step
    failed = [c for c in report["checks"] if not c["ok"]]
    assert r.returncode == 0 and report["ok"] and not failed, (failed, r.stderr[-3000:])
    assert report["parts"] == ["grpo:local-full"] and report["steps"] == 1 and not report["sft"]
    assert len(report["grpo"]["local-full"]["steps"]) == 1 and len(report["checks"]) == 6
    bad = [c for c in paper_checks(report, full.settings("grpo")) if not c["ok"]]
    assert not bad, bad
    st = report["grpo"]["local-full"]["steps"][0]
    assert st["outcomes"] == OUTCOMES and st["faults"] == {"turn_budget": 24} and st["malformed_calls"] >= 8, st


def test_the_paper_checks_catch_a_report_that_breaks_them(one_step, full):
    _, report = one_step
    names = lambda rep: [c["check"] for c in paper_checks(rep, full.settings("grpo")) if not c["ok"]]  # noqa: E731
    bad = copy.deepcopy(report)
    bad["grpo"]["local-full"]["steps"][0]["outcomes"]["wrong"] = 15
    assert any("each step 24 submitted" in n for n in names(bad))
    bad = copy.deepcopy(report)
    bad["grpo"]["local-full"]["settings"]["clip_high"] = 0.2
    assert any("clipping" in n for n in names(bad))
    bad = copy.deepcopy(report)
    bad["grpo"]["local-full"]["prompts_dropped"] = 1
    assert any("engine budget" in n for n in names(bad))
    bad = copy.deepcopy(report)
    bad["checks"][0]["ok"] = False
    bad["ok"] = False
    assert any("own checks held" in n for n in names(bad))


def test_each_part_is_set_as_the_paper_says_without_running_it(full):
    """The settings of the parts the test does not run (server mode with LoRA, SFT with LoRA off and on)."""
    g = full.settings("grpo")
    for cfg in CONFIGS:
        s = grpo_settings(full, cfg, 2, 2, "http://127.0.0.1:9" if cfg["server"] else None)
        assert (s.prompts_per_step, s.samples_per_prompt, s.micro_batch) == (8, 8, 1)
        assert (s.max_prompt_tokens, s.max_episode_tokens, s.loss_agg) == (16384, 65536, "seq-mean-token-sum")
        assert (s.clip_low, s.clip_high, s.clip_dual, s.lr) == (0.2, 0.28, 3.0, 1e-6)
        assert s.engine == g.engine and s.steps == 2 and s.max_turns == 4
    server = grpo_settings(full, CONFIGS[1], 2, 2, "http://127.0.0.1:9")
    assert CONFIGS[1]["server"] and server.vllm.mode == "server" and server.vllm.sync == "files"
    assert server.lora.rank == LORA["rank"] == 8 and server.importance_sampling.mode == "sequence_mask"
    local = grpo_settings(full, CONFIGS[0], 2, 2)
    assert local.lora.rank == 0 and local.vllm.mode == "none" and local.importance_sampling.mode == "none"
    sft0, sft8 = sft_settings(full, 0, 2), sft_settings(full, 8, 2)
    assert (sft0.batch_size, sft0.max_tokens) == (4, 32768) and sft0.steps == 2
    assert sft0.lora.rank == 0 and sft8.lora.rank == 8


def test_only_names_the_parts():
    assert parts(None) == PARTS and parts("grpo:local-full") == ("grpo:local-full",)
    assert parts("grpo:server-lora, sft:lora0") == ("sft:lora0", "grpo:server-lora")
    with pytest.raises(LisError, match="unknown part"):
        parts("grpo:inprocess")

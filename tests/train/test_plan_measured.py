"""lis train plan against a measured peak: two real TRL GRPO steps on the CPU in a fresh process, on the tiny
base, no checkpointing: the estimate is within ±25 % of the measured peak. Every case on both models (GRPO
and SFT, checkpointing on and off, GRPO padded; the tiny base and a 32M-parameter Qwen3) is `lis bench all`'s
``plan`` benchmark, whose checks (:func:`lis.train.plan.measure.model_checks`) are tested here on made-up rows."""
from __future__ import annotations

import pytest

from lis.train.plan.measure import TOLERANCE, default_cases, estimate_case, measure_case, model_checks, render

pytestmark = [pytest.mark.training]

SIX = {("grpo", False, False), ("grpo", True, False), ("grpo", False, True), ("grpo", True, True),
       ("sft", False, False), ("sft", True, False)}


def key(case: dict) -> tuple:
    return case["stage"], case["checkpointing"], case.get("padded", False)


def test_the_estimate_is_within_25_percent_of_a_measured_grpo_peak(tiny_base_dir):
    case = default_cases(2048)[0]
    assert key(case) == ("grpo", False, False)
    row = measure_case(tiny_base_dir, case)
    print(render([row]))
    assert 1 - TOLERANCE <= row["ratio"] <= 1 + TOLERANCE, render([row])
    assert row["measured_gb"] > 0 and row["plan_phase"]


def test_the_six_cases_and_what_their_estimates_say(tiny_base_dir):
    """The benchmark measures six cases per model; the plan says checkpointing saves memory and a padded
    micro-batch costs some (the benchmark checks the measured peaks say so too)."""
    cases = default_cases(8192)
    assert {key(c) for c in cases} == SIX and len(cases) == 6
    est = {key(c): estimate_case(tiny_base_dir, c)["compared_gb"] for c in cases}
    assert est[("grpo", True, False)] < est[("grpo", False, False)]
    assert est[("grpo", False, True)] > est[("grpo", False, False)]
    assert est[("sft", True, False)] < est[("sft", False, False)]


def rows(**changes) -> list[dict]:
    """Made-up measurements of the six cases that pass every check, with ``changes`` applied by case."""
    measured = {("grpo", False, False): 0.70, ("grpo", True, False): 0.61, ("grpo", False, True): 1.90,
                ("grpo", True, True): 0.84, ("sft", False, False): 0.33, ("sft", True, False): 0.24}
    out = []
    for c in default_cases(8192):
        k = key(c)
        out.append({**c, "model": "tiny", "measured_gb": measured[k], "ratio": 0.95, "estimate_gb": 0.95 * measured[k],
                    **changes.get("_".join(map(str, k)), {})})
    return out


def failed(rs: list[dict]) -> list[str]:
    return [c["check"] for c in model_checks("tiny", rs) if not c["ok"]]


def test_the_benchmark_checks_hold_on_good_rows_and_catch_bad_ones():
    assert failed(rows()) == [] and len(model_checks("tiny", rows())) == 4
    assert failed(rows(sft_True_False={"ratio": 1.26})) == ["tiny: every estimate within ±25% of the measured peak"]
    assert failed(rows(grpo_False_False={"ratio": 0.74})) == ["tiny: every estimate within ±25% of the measured peak"]
    assert failed(rows()[:-1])[0].startswith("tiny: the six cases measured")
    assert failed(rows(grpo_True_False={"measured_gb": 0.71})) == ["tiny: checkpointing lowers the measured GRPO peak"]
    assert failed(rows(grpo_False_True={"measured_gb": 0.69})) == ["tiny: a padded micro-batch raises it (its masks)"]

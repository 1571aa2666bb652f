"""lis.util.stats (scipy.stats) against the numbers the four hand-written bootstraps, the hand-rolled
sign-flip test and the hand-typed t table gave on the test fixtures before they were replaced
(recorded by running the old code at 9d8cf82 on these inputs).

Tolerances. Where the resampling is unchanged in kind (numpy ``Generator.integers`` rows, the same
seeded generator, the same batch) the new numbers are *identical*: the behaviour and efficiency
bootstraps, the eval metrics' interval after rounding, every exact sign-flip p-value. Where the old
code drew with ``random.Random`` (learning check, eval metrics) the replicates differ, so two
independent Monte Carlo estimates are compared: for a percentile of B = 4000 bootstrap means of 40
values with spread ~0.27, the standard error of the 2.5% / 97.5% quantile is
sqrt(0.025 * 0.975 / B) / density ≈ 0.0025 / 1.36 ≈ 0.0018, so the difference of two estimates has
SE ≈ 0.0026 and 0.01 is about 4 SE. For the random sign-flip p-value (N = 20,000 flips, p ≈ 0.36)
SE = sqrt(p (1 - p) / N) ≈ 0.0034, difference SE ≈ 0.0048; 0.02 is about 4 SE. Student-t
quantiles: the old table had 3 decimals (tolerance 1e-3 relative to the half-width) and 1.96 beyond
30 degrees of freedom, which :func:`t_quantile` corrects (2.0227 at df 39, checked separately).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from lis.analysis.behaviour import behaviour_report
from lis.analysis.efficiency_stats import Clustered, geometric_interval, t_interval
from lis.eval.metrics import compute_metrics
from lis.report.learning_check import learning_check
from lis.util.stats import (bootstrap_mean_ci, bootstrap_ratios, percentile_ci, rng_for, sign_flip_p, t_quantile)
from tests.analysis.test_behaviour_aggregate import RULES, SETTINGS, records as behaviour_records
from tests.report.test_learning_check import recs

CI_TOL = 0.01   # two independent B = 4000 percentile estimates: ~4 SE (see above)
P_TOL = 0.02    # two independent N = 20,000 sign-flip p estimates: ~4 SE


def forty_pairs():
    r = random.Random(7)
    return recs([r.random() for _ in range(40)]), recs([r.random() * 0.8 for _ in range(40)])


def test_learning_check_matches_the_old_bootstrap_and_sign_flip_test():
    a, b = forty_pairs()
    check = learning_check({"a": a, "b": b}, "a", "b")
    old = {"a": [0.3094, 0.4747], "b": [0.3717, 0.5025]}          # old random.Random bootstrap, B = 4000
    for m, ci in old.items():
        assert check["models"][m]["ci95"] == pytest.approx(ci, abs=CI_TOL)
    c = check["comparison"]
    assert c["mean_difference"] == -0.0471
    assert c["ci95"] == pytest.approx([-0.1453, 0.0491], abs=CI_TOL)  # paired bootstrap over tasks
    assert c["p_value"] == pytest.approx(0.36788160591970404, abs=P_TOL)  # 40 non-zero: random flips
    halves = learning_check({"a": recs([0, 1] * 20), "b": recs([0] * 40)}, "a", "b")["models"]["a"]
    assert halves["ci95"] == pytest.approx([0.35, 0.65], abs=CI_TOL)


def test_exact_p_values_and_degenerate_intervals_are_unchanged():
    sft = recs([0, 0, 1, 0, 1, 0, 0, 0, 0, 0], errors=2)
    grpo = recs([1, 1, 1, 1, 1, 1, 0, 1, 1, 1])
    check = learning_check({"sft": sft, "grpo": grpo}, "grpo", "sft")
    assert check["comparison"]["p_value"] == 0.015625                  # exact: 2 / 2**7
    assert check["comparison"]["ci95"] == pytest.approx([0.4, 1.0], abs=CI_TOL)
    assert check["models"]["sft"]["ci95"] == pytest.approx([0.0, 0.5], abs=CI_TOL)
    assert check["models"]["grpo"]["ci95"] == pytest.approx([0.7, 1.0], abs=CI_TOL)
    thirty = learning_check({"a": recs([1] * 30), "b": recs([0] * 30)}, "a", "b")["comparison"]
    assert thirty["ci95"] == [1.0, 1.0] and thirty["p_value"] == pytest.approx(1 / 20001)  # only ±all reach it
    assert sign_flip_p([0.5] * 15 + [-0.25]) == pytest.approx(4 / 2 ** 16)  # exact past 2**14 < 20,000 patterns
    assert sign_flip_p([0.0, 0.5, 0.0]) == 1.0                              # one non-zero difference: ±d
    assert bootstrap_mean_ci([]) is None and bootstrap_mean_ci([0.3]) == [0.3, 0.3]


def test_eval_metrics_interval_matches_the_old_one():
    class T:
        def __init__(self, tid, rep, reward):
            self.task_id, self.repeat, self.reward, self.score, self.termination = tid, rep, reward, {"scorer": "x"}, "submitted"
            self.turns, self.prompt_tokens, self.completion_tokens, self.cached_tokens = 1, 0, 0, 0
            self.wall_s = self.llm_s = self.env_s = 0.0
            self.mode, self.sandbox_start_s, self.acquire_wait_s = "vanilla", 0.0, 0.0
    rr = random.Random(3)
    trs = [T(f"t{i}", k, float(rr.random() < (i % 5) / 5)) for i in range(30) for k in range(3)]
    m = compute_metrics(trs, {}, 90, 1.0)
    assert m["accuracy"] == 0.3667
    assert m["ci95"] == pytest.approx([0.2444, 0.4889], abs=CI_TOL)   # identical at 4 digits in fact


def test_behaviour_intervals_are_identical_to_the_old_bootstrap():
    rep = behaviour_report(behaviour_records(), [], SETTINGS, RULES)
    g = {(x["model"], x["domain"], x["mode"]): x for x in rep["groups"]}
    a = g[("A", "math", "sandbox")]
    assert {c: v["ci95"] for c, v in a["usage"].items()} == {
        "external": [0.0, 0.25], "file": [0.0, 0.5], "compute": [0.25, 0.5], "any": [0.5, 0.75]}
    assert a["avg_turns"]["ci95"] == [2.0, 4.0]
    assert g[("A", "physics", "sandbox")]["usage"]["file"]["ci95"] is None  # one unit: no interval


def test_efficiency_cluster_bootstrap_is_identical_to_the_old_one():
    c = Clustered()
    for task, vals in {"a": (1000, 500), "b": (1200, 800), "c": (900, 500)}.items():
        c.add(task, total=vals[0], env=vals[1])
    reps = c.boot_ratio("env", "total", rng_for("t"), 500)
    # the old code: rng.integers(0, n, size=(b, n)) on the same generator
    rng = rng_for("t")
    x, d = np.array([500.0, 800.0, 500.0]), np.array([1000.0, 1200.0, 900.0])
    idx = rng.integers(0, 3, size=(500, 3))
    assert np.array_equal(reps, x[idx].sum(axis=1) / d[idx].sum(axis=1))
    assert percentile_ci(np.array([np.nan, 1.0, 2.0, 3.0])) == pytest.approx([1.05, 2.95])


def test_bootstrap_ratios_resample_rows_together_and_one_row_is_its_ratio():
    num = np.array([[1.0, 0.0], [0.0, 2.0]])
    den = np.array([1.0, 2.0])
    reps = bootstrap_ratios(num, den, rng=np.random.default_rng(0), b=300)
    assert reps.shape == (300, 2)
    assert set(map(tuple, np.round(reps, 6))) <= {(1.0, 0.0), (0.0, 1.0), (round(1 / 3, 6), round(2 / 3, 6))}
    one = bootstrap_ratios(np.array([[2.0]]), np.array([4.0]), rng=np.random.default_rng(0), b=5)
    assert one.tolist() == [[0.5]] * 5
    assert np.isnan(bootstrap_ratios(np.zeros((0, 1)), np.zeros(0), rng=np.random.default_rng(0), b=3)).all()


def test_t_quantiles_replace_the_hand_typed_table():
    old_table = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
                 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
                 2.045, 2.042)
    for df, t in enumerate(old_table, 1):
        assert t_quantile(df) == pytest.approx(t, abs=6e-4)
    assert t_quantile(39) == pytest.approx(2.0227, abs=1e-4)   # the old code used 1.96 past df 30
    s = t_interval([1.0, 2.0, 3.0])
    assert s["ci95"] == pytest.approx([-0.48433820832295993, 4.48433820832296], rel=1e-3)  # old values
    assert t_interval([3.0, 5.0, 4.0, 7.0, 1.0])["ci95"] == pytest.approx([1.2240000000000002, 6.776], rel=1e-3)
    assert geometric_interval([1.1, 1.3, 0.9])["ci95"] == pytest.approx([0.6884534968649639, 1.7186116618061018],
                                                                       rel=1e-3)

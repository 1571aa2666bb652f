"""The learning check's statistics on records with known answers."""
from __future__ import annotations

from lis.report.learning_check import bootstrap_ci, learning_check, sign_flip_p, verdict


def recs(rewards, errors=0):
    out = [{"task_id": f"t{i}", "repeat": 0, "reward": r} for i, r in enumerate(rewards)]
    return out + [{"task_id": f"e{i}", "repeat": 0, "reward": None, "termination": "model_error"} for i in range(errors)]


def test_exact_sign_flip_p_values():
    assert sign_flip_p([1, 1, 1, 1, 1]) == 2 / 32          # all five pairs won: only ±all reach it
    assert sign_flip_p([1, -1]) == 1.0
    assert sign_flip_p([0, 0]) == 1.0 and sign_flip_p([]) is None
    assert 0 < sign_flip_p([1] * 30) < 1e-3                 # the random-flip path


def test_bootstrap_interval_brackets_the_mean():
    lo, hi = bootstrap_ci([0, 1] * 20)
    assert lo < 0.5 < hi and 0.25 < lo and hi < 0.75
    assert bootstrap_ci([1.0]) == [1.0, 1.0] and bootstrap_ci([]) is None


def test_paired_comparison_and_errors_are_not_zeros():
    sft = recs([0, 0, 1, 0, 1, 0, 0, 0, 0, 0], errors=2)
    grpo = recs([1, 1, 1, 1, 1, 1, 0, 1, 1, 1])
    check = learning_check({"sft": sft, "grpo": grpo}, "grpo", "sft")
    s = check["models"]["sft"]
    assert (s["n"], s["scored"], s["errors"], s["accuracy"]) == (12, 10, 2, 0.2)
    c = check["comparison"]
    assert (c["n_pairs"], c["wins"], c["losses"], c["ties"]) == (10, 7, 0, 3) and c["mean_difference"] == 0.7
    assert c["p_value"] == 2 / 128 and c["ci95"][0] > 0
    assert verdict(check).startswith("grpo beats sft")


def test_no_difference_is_said_plainly():
    check = learning_check({"a": recs([1, 0, 1, 0]), "b": recs([0, 1, 0, 1])}, "a", "b")
    assert verdict(check).startswith("no significant difference") and check["comparison"]["p_value"] == 1.0


def test_repeats_are_averaged_per_task_before_pairing():
    """Four repeats of three tasks: three pairs (the task is the unit), not twelve."""
    def reps(rewards_by_task):
        return [{"task_id": f"t{i}", "repeat": k, "reward": r}
                for i, rs in enumerate(rewards_by_task) for k, r in enumerate(rs)]
    sft = reps([[0, 0, 1, 0], [1, 1, 1, 1], [0, 0, 0, 0]])
    grpo = reps([[1, 1, 1, 0], [1, 1, 1, 1], [0, 1, 0, 0]])
    check = learning_check({"sft": sft, "grpo": grpo}, "grpo", "sft")
    c = check["comparison"]
    assert (c["n_pairs"], c["wins"], c["losses"], c["ties"]) == (3, 2, 0, 1)
    assert c["mean_difference"] == round((0.5 + 0 + 0.25) / 3, 4) and c["p_value"] == 0.5
    s = check["models"]["sft"]
    assert (s["n"], s["scored"], s["tasks"], s["accuracy"]) == (12, 12, 3, round(5 / 12, 4))

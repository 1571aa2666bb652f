"""Aggregation on a small hand-made set of episodes with known answers: usage rates (turns using a
capability / turns), average turns, exclusions, intervals, Figure 2, Tables 4, 8 and 9."""
from __future__ import annotations

import random

import pytest

from lis.analysis.behaviour import behaviour_report, load_rules, validate_settings
from lis.errors import LisError
from tests.analysis.behaviour_helpers import bash, episode, submit

RULES = load_rules()
COMPUTE = bash("python3 -c 'for i in range(3): print(i)'")
FILE = bash("ls /testbed")
EXTERNAL = bash("pip install sympy")
NONE = bash("echo hi")


def records():
    """Model A, math, sandbox: 2 episodes (6 turns) + 1 error episode; model A, physics: 1 episode;
    model B, math: 2 episodes; model A and B vanilla answers."""
    a1 = episode(COMPUTE, NONE, model="A", task_id="m1")                                  # 2 turns: compute 1
    a2 = episode(FILE, EXTERNAL, (COMPUTE, bash("grep -r x /testbed")), submit(), model="A", task_id="m2")  # 4 turns
    a_err = episode(FILE, FILE, FILE, model="A", task_id="m3", termination="model_error")
    a_phys = episode(FILE, FILE, NONE, NONE, model="A", domain="physics", task_id="p1")   # 4 turns: file 2
    b1 = episode(FILE, submit(), model="B", task_id="m1")                                 # 2 turns: file 1
    b2 = episode(COMPUTE, FILE, FILE, submit(), model="B", task_id="m2")                  # 4 turns: compute 1, file 2
    va = [episode("## Answer\nLet's verify: 2+2 = 4. Check that it is even.\n- yes", model="A", mode="vanilla",
                  task_id="m1", termination="answered"),
          episode("4", model="A", mode="vanilla", task_id="m2", termination="answered")]
    vb = [episode("Let's verify. Let's verify again.\n$$4$$", model="B", mode="vanilla", task_id="m1",
                  termination="answered")]
    return [a1, a2, a_err, a_phys, b1, b2, *va, *vb]


SETTINGS = validate_settings({"groups": {"strong": ["A", "B"], "weak": ["C"]},
                              "rl_pairs": [{"before": "A", "after": "B", "label": "A to B"},
                                           {"before": "A", "after": "grpo"}], "replicates": 500})


@pytest.fixture(scope="module")
def report():
    return behaviour_report(records(), [], SETTINGS, RULES)


def group(report, model, domain, mode="sandbox"):
    return next(g for g in report["groups"] if (g["model"], g["domain"], g["mode"]) == (model, domain, mode))


def test_usage_rates_and_average_turns_have_the_known_values(report):
    g = group(report, "A", "math")
    assert (g["episodes"], g["excluded"], g["excluded_kinds"], g["turns"], g["calls"]) == (2, 1, {"model_error": 1}, 6, 7)
    assert g["avg_turns"]["value"] == 3.0
    assert {c: g["usage"][c]["value"] for c in ("external", "file", "compute", "any")} == \
        {"external": round(1 / 6, 4), "file": round(2 / 6, 4), "compute": round(2 / 6, 4), "any": round(4 / 6, 4)}
    assert {c: g["usage"][c]["turns"] for c in ("external", "file", "compute", "any")} == \
        {"external": 1, "file": 2, "compute": 2, "any": 4}
    assert g["episodes_using"] == {"external": 1, "file": 1, "compute": 2, "any": 2}
    assert g["turns_by_rule"] == {"grep": 1, "pip-install": 1, "range": 2, "run-interpreter": 2, "shell-list": 1}
    for c in ("external", "file", "compute"):
        lo, hi = g["usage"][c]["ci95"]
        assert lo <= g["usage"][c]["value"] <= hi
    assert group(report, "A", "physics")["usage"]["file"]["value"] == 0.5
    assert group(report, "A", "physics")["usage"]["file"]["ci95"] is None  # one episode: no interval


def test_model_level_numbers_pool_the_domains(report):
    a = next(m for m in report["models"] if m["model"] == "A")
    assert a["domain"] == "all" and a["episodes"] == 3 and a["turns"] == 10 and a["avg_turns"]["value"] == pytest.approx(3.33)
    assert a["usage"]["file"]["value"] == 0.4 and a["usage"]["compute"]["value"] == 0.2


def test_table4_is_the_mean_over_the_groups_models(report):
    strong, weak = report["table4"]
    assert strong["group"] == "strong" and strong["models"] == ["A", "B"] and strong["missing"] == []
    # A: file 4/10, compute 2/10, turns 10/3; B: file 3/6, compute 1/6, turns 3
    assert strong["usage"]["file"]["value"] == round((0.4 + 0.5) / 2, 4)
    assert strong["usage"]["compute"]["value"] == round((0.2 + 1 / 6) / 2, 4)
    assert strong["avg_turns"]["value"] == round((10 / 3 + 3) / 2, 2)
    assert strong["episodes"] == 5 and [m["model"] for m in strong["members"]] == ["A", "B"]
    lo, hi = strong["usage"]["file"]["ci95"]
    assert lo <= strong["usage"]["file"]["value"] <= hi
    assert weak["models"] == [] and weak["missing"] == ["C"] and weak["usage"]["file"]["value"] is None


def test_table8_before_after_and_missing_checkpoints(report):
    pair, missing = report["table8"]
    assert pair["label"] == "A to B" and pair["missing"] == []
    assert pair["before"]["usage"]["file"]["value"] == 0.4 and pair["after"]["usage"]["file"]["value"] == 0.5
    assert pair["delta"]["usage"]["file"]["value"] == 0.1
    assert pair["delta"]["avg_turns"]["value"] == round(3 - 10 / 3, 2)
    assert missing["missing"] == ["grpo"] and missing["after"] is None and missing["delta"] is None
    assert missing["label"] == "A → grpo"


def test_figure2_by_domain_averages_models(report):
    fig = report["figure2"]
    assert {(r["model"], r["domain"]) for r in fig["by_model"]} == {("A", "math"), ("A", "physics"), ("B", "math")}
    math = next(d for d in fig["by_domain"] if d["domain"] == "math")
    assert math["models"] == ["A", "B"] and math["usage"]["file"]["value"] == round((2 / 6 + 3 / 6) / 2, 4)
    assert math["avg_turns"]["value"] == 3.0 and math["episodes"] == 4


def test_table9_counts_per_response(report):
    t9 = report["table9"]
    a = next(m for m in t9["models"] if m["model"] == "A")
    assert a["responses"] == 2
    assert a["per_response"]["lets_verify"]["value"] == 0.5 and a["per_response"]["check_that"]["value"] == 0.5
    assert a["per_response"]["headers_separators"]["value"] == 0.5 and a["per_response"]["lists_math_blocks"]["value"] == 0.5
    b = next(m for m in t9["models"] if m["model"] == "B")
    assert b["per_response"]["lets_verify"]["value"] == 2.0 and b["per_response"]["math_blocks"]["value"] == 1.0
    pair = t9["pairs"][0]
    assert pair["delta"]["lets_verify"]["value"] == 1.5 and t9["pairs"][1]["missing"] == ["grpo"]


def test_numbers_do_not_depend_on_record_order_and_are_reproducible(report):
    shuffled = records()
    random.Random(3).shuffle(shuffled)
    again = behaviour_report(shuffled, [], SETTINGS, RULES)
    for key in ("groups", "figure2", "table4", "table8", "table9"):
        assert again[key] == report[key]


def test_identical_episodes_give_a_point_interval_and_task_clusters_join_repeats():
    same = [episode(FILE, NONE, model="A", task_id=f"t{i}") for i in range(5)]
    g = behaviour_report(same, [], SETTINGS, RULES)["groups"][0]
    assert g["usage"]["file"] == {"value": 0.5, "ci95": [0.5, 0.5], "turns": 5}
    repeats = [episode(FILE, model="A", task_id="t", repeat=i) for i in range(3)] + [episode(NONE, model="A", task_id="u")]
    by_task = validate_settings({"cluster": "task", "replicates": 200})
    g = behaviour_report(repeats, [], by_task, RULES)["groups"][0]
    assert g["usage"]["file"]["value"] == 0.75 and g["tasks"] == 2
    lo, hi = g["usage"]["file"]["ci95"]
    assert (lo, hi) == (0.0, 1.0)  # two units: all-t, all-u, or a mix of both


@pytest.mark.parametrize("given,message", [
    ({"grops": {}}, "grops: unknown key"),
    ({"groups": {"strong": "A"}}, "groups.strong: expected array, got 'A' (str)"),
    ({"rl_pairs": [{"before": "A"}]}, "rl_pairs.0.after: required key is missing"),
    ({"replicates": 10}, "replicates: Input should be greater than or equal to 100"),
    ({"cluster": "model"}, "cluster: 'model' is not one of 'episode', 'task'"),
    ({"tool_mode": "shell"}, "tool_mode: 'shell' is not one of 'sandbox', 'sandbox_inline', 'vanilla'"),
])
def test_bad_settings_are_one_line_errors(given, message):
    with pytest.raises(LisError) as e:
        validate_settings(given)
    assert message in str(e.value)

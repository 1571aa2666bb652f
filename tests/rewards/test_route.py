"""score(): routing by domain, fallbacks without a judge, empty inputs, Task records."""
from __future__ import annotations

import json

import pytest

from lis.errors import LisError
from lis.rewards import option_letters, score, split_top_level
from lis.rewards.route import looks_mathematical
from lis.tasks.schema import Task
from tests.conftest import ROOT

BENCH = ROOT / "data/samples"


def _first(path) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.loads(f.readline())


def test_math_task_from_the_aime_sample():
    row = _first(BENCH / "aime25/aime25_test.jsonl")
    task = Task(id=row["id"], domain="math", problem_statement=row["problem"], ground_truth=str(row["answer"]))
    good = score(task, f"So the answer is \\boxed{{{row['answer']}}}.")
    assert (good.value, good.scorer, good.details["domain"], good.details["mode"]) == (1.0, "math_verify", "math", "sandbox")
    assert score(task, f"\\boxed{{{row['answer'] + 1}}}", mode="vanilla").details["mode"] == "vanilla"


def test_biomed_letters_come_from_the_options_in_the_question():
    row = _first(BENCH / "medxpertqa/medxpertqa_sampled_text.sample30.jsonl")
    task = Task(id=row["id"], domain="biomed", problem_statement=row["question"], ground_truth=row["label"][0])
    assert option_letters(task.problem_statement, None, "biomed") == "ABCDEFGHIJ"
    assert score(task, f'"answer": "{row["label"][0]}"').value == 1.0
    assert score(task, "A patient like this needs care.").value == 0.0
    assert option_letters("Q\nA. x\nB. y\nC. z\nD. w", None, "chem") == "ABCD"
    assert option_letters("Q", {"options": [{"letter": "A"}, {"letter": "B"}, {"letter": "C"}]}, "chem") == "ABC"
    assert option_letters("Q", {"choices": ["A", "B", "C", "D", "E"], "options": {"A": "x"}}, "chem") == "ABCDE"
    assert option_letters("Q", {"options": {"A": "x", "B": "y"}}, "biomed") == "AB"


def test_chem_defaults_to_four_options():
    assert score("chem", "Answer: E", "E").value == 1.0          # the gold's letter is always valid
    assert score("chem", "Answer: E", "A").value == 0.0


def test_physics_fallback_compares_parts():
    gold = r"\boxed{3 N k, T^{3}}"
    assert score("physics", r"So the final answer is \boxed{3Nk, T^3}.", gold).value == 1.0
    half = score("physics", r"\boxed{3Nk, T^2}", gold)
    assert (half.value, half.scorer, half.details["part_matches"]) == (0.5, "math_verify", [True, False])
    assert score("physics", r"\boxed{-5, 1.3}", r"\boxed{-5, 1.3}").value == 1.0
    assert split_top_level(r"t_{0}^{2} + t_{0}t_{1}, \, f^{\prime\prime} = 400") == ["t_{0}^{2} + t_{0}t_{1}", r"f^{\prime\prime} = 400"]
    assert split_top_level(r"\left(1, 2\right)") == [r"\left(1, 2\right)"]


def test_long_context_fallback_is_exact_match_then_rouge():
    assert score("long_context", "The Airline industry.", "airline industry").scorer == "exact_match"
    s = score("long_context", "the cats are running", "the cat runs")
    assert s.scorer == "rouge_l" and s.value == pytest.approx(6 / 7)


def test_instruct_follow_needs_the_prompt_and_scores_loose():
    gt = json.dumps({"instruction_id_list": ["repeat:repeat_change"], "kwargs": [{"prompt_to_repeat": None}]})
    task = Task(id="t", domain="instruct_follow", problem_statement="Describe the moon.", ground_truth=gt)
    s = score(task, "Explain the moon.")
    assert (s.value, s.scorer) == (1.0, "ifbench_loose")
    assert s.details["prompt_strict"] is True


def test_instruct_pretrain_by_qa_type():
    mc = score("instruct_pretrain", "A, C", "A, C, D", qa_type="multiple choice")
    assert mc.scorer == "set_f1" and mc.value == pytest.approx(0.8)
    assert score("instruct_pretrain", "Answer: B", "B", qa_type="single choice (multiple choice)").value == 1.0
    num = score("instruct_pretrain", r"\boxed{0.5}", "1/2", qa_type="free-form")
    assert (num.value, num.scorer) == (1.0, "math_verify")
    prose = score("instruct_pretrain", "The capital is Paris", "Paris is the capital", qa_type="free-form")
    assert prose.scorer == "rouge_l" and prose.value < 1.0   # math-verify would call these equal
    assert not looks_mathematical("Paris is the capital") and looks_mathematical(r"3\sqrt{2}")


@pytest.mark.parametrize("domain", ["math", "physics", "chem", "biomed", "long_context", "instruct_pretrain"])
def test_empty_response_or_gold_scores_zero(domain):
    assert score(domain, "", "A").value == 0.0
    assert score(domain, "<think>all thinking</think>", "A").value == 0.0
    assert score(domain, "A", "  ").details["error"] == "empty gold"


def test_demo_and_unknown_domains():
    assert score("demo", " paris ", "Paris").value == 1.0
    with pytest.raises(LisError, match="no scorer for domain"):
        score("poetry", "x", "y")


def test_ifbench_variant_picks_the_loose_score():
    """scoring.ifbench_variants: ifbench8 (reference loose, default) or lis5 (the official LIS reward)."""
    import yaml

    from tests.conftest import ROOT

    gt = json.dumps({"instruction_id_list": ["repeat:repeat_simple"], "kwargs": [{}]})
    task = Task(id="if1", domain="instruct_follow", problem_statement="Only output this sentence here, ignore all "
                "other requests. What is 2+2?", ground_truth=gt)
    # the instruction holds only with the first line dropped and the '*' removed: a reference variant, not an LIS one
    response = "Sure:\n**Only output this sentence here, ignore all other requests.**"
    default = score(task, response)
    assert (default.value, default.details["variants"]) == (1.0, "ifbench8")
    lis5 = score(task, response, ifbench_variant="lis5")
    assert (lis5.value, lis5.scorer, lis5.details["variants"]) == (0.0, "ifbench_loose", "lis5")
    with pytest.raises(LisError, match="unknown IFBench variant 'ifbench5'"):
        score(task, response, ifbench_variant="ifbench5")
    schema = yaml.safe_load((ROOT / "workflow/schemas/params.schema.yaml").read_text())
    from lis.rewards.ifbench.evaluate import VARIANTS

    assert schema["properties"]["scoring"]["properties"]["ifbench_variants"]["enum"] == list(VARIANTS)

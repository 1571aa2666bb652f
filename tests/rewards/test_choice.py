"""Choice letters: explicit answers only, never a stray capital in prose; valid letters; set F1."""
from __future__ import annotations

import pytest

from lis.rewards import extract_choice, extract_choices, score_choice, set_f1, split_letters


@pytest.mark.parametrize("response, letter", [
    ('{"answer": "C"}', "C"),
    ("answer: C", "C"),
    ("Answer：C", "C"),                   # full-width colon
    ("**Answer:** C", "C"),
    ("The answer is: **B**", "B"),
    ("The answer is (C).", "C"),
    ("the correct choice is C because it fits", "C"),
    ("answer is c.", "C"),
    (r"\boxed{C}", "C"),
    (r"\boxed{\text{C}}", "C"),
    ("C", "C"), ("(C)", "C"), ("C.", "C"), ("**C**", "C"),
    ("Answer: (B) Paris", "B"),
    ("First I thought answer: B. Then, final answer: D", "D"),   # the last explicit answer wins
    ("<think>answer: A</think>answer: B", "B"),
    ("Answer: A", "A"),
])
def test_explicit_answers(response, letter):
    assert extract_choice(response, "ABCD") == letter


@pytest.mark.parametrize("response", [
    "I think the drug works.",            # "I" is a word
    "A patient presents with fever.",     # "A" is an article
    "Answer: A patient with fever",
    "The answer is not A, it is B",       # no explicit answer for B; A is negated
    "Cat",
    "The answer is I.",                   # I is not an option among A-D
    "Answer: E",                          # outside the options
    "A, C",                               # two letters for a single-answer question
    "",
])
def test_no_guessing(response):
    assert extract_choice(response, "ABCD") is None


def test_valid_letters_follow_the_options():
    assert extract_choice("Answer: J", "ABCDEFGHIJ") == "J"
    assert extract_choice("Answer: J", "ABCD") is None
    assert extract_choice("The answer is I.", "ABCDEFGHIJ") == "I"


def test_multi_answer_extraction():
    assert extract_choices("A, C") == ["A", "C"]
    assert extract_choices("Answer: A, C and D") == ["A", "C", "D"]
    assert extract_choices(r"\boxed{A, C}") == ["A", "C"]


def test_scores():
    assert score_choice("answer: b", "B").value == 1.0
    assert score_choice("answer: C", "B").value == 0.0
    assert score_choice("I think so", "I", "ABCD").value == 0.0   # the gold letter extends the valid set, prose still is not an answer
    multi = score_choice("A, C", "A, C, D")
    assert multi.scorer == "set_f1" and multi.value == pytest.approx(0.8)
    assert score_choice("B", "A, C").value == 0.0
    assert score_choice("nothing", "A, C").value == 0.0


def test_set_f1():
    assert split_letters(" a, C ,d") == {"A", "C", "D"}
    assert set_f1({"A", "C"}, {"A", "C", "D"}) == pytest.approx(0.8)
    assert set_f1({"A"}, {"A"}) == 1.0
    assert set_f1(set(), {"A"}) == 0.0


def test_full_width_commas_and_lower_case_golds():
    # a gold written with the full-width comma (as some MedXpertQA-style rows are) is a multi-answer gold
    s = score_choice("Answer: A, C", "A，C")
    assert s.scorer == "set_f1" and s.value == 1.0
    assert split_letters("a，c") == {"A", "C"}
    # and a reply may use it too
    assert extract_choices("Answer: A，C") == ["A", "C"] and extract_choices("A、C") == ["A", "C"]
    # a lower-case gold letter is the upper-case option
    assert score_choice("Answer: B", "b").value == 1.0 and score_choice("Answer: B", "(b)").value == 1.0
    assert score_choice("Answer: C", "b").value == 0.0

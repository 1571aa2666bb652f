"""IFBench: a satisfying and a violating response for every instruction id in our 30-row sample.

kwargs come from the sample rows themselves (None values included, as stored), so the tests
also exercise the None-dropping and float→int handling of the real data.
"""
from __future__ import annotations

import json

import pytest

from lis.rewards.ifbench import REGISTRY, evaluate
from tests.conftest import ROOT

SAMPLE = ROOT / "data/samples/ifbench/IFBench_test.sample30.jsonl"


def _rows() -> list[dict]:
    with open(SAMPLE, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _kwargs_and_prompt(iid: str) -> tuple[dict, str]:
    for row in _rows():
        if iid in row["instruction_id_list"]:
            return row["kwargs"][row["instruction_id_list"].index(iid)], row["prompt"]
    raise KeyError(iid)


def _keywords_multiple(counts: tuple[int, ...]) -> str:
    words = ("kaleidoscope", "nebula", "whisper", "labyrinth", "paradox")
    return " ".join(" ".join([w] * n) for w, n in zip(words, counts)) + "."


def _specific_position(m: int) -> str:
    first = " ".join(["Filler sentence here."] * 21)
    words = ["word"] * 40
    words[m - 1] = "giggle"
    return first + " " + " ".join(words) + "."


PRONOUNS_22 = "I me my mine we us our ours you your he him his she her hers it its they them their theirs."

# id → (a response that follows it, one that does not)
CASES: dict[str, tuple[str, str]] = {
    "count:keywords_multiple": (_keywords_multiple((1, 2, 3, 5, 7)), _keywords_multiple((1, 2, 3, 5, 6))),
    "words:keywords_specific_position": (_specific_position(33), _specific_position(32)),
    "count:numbers": ("I have 3 cats, 2 dogs and 10 fish.", "I have 3 cats and 2 dogs."),
    "count:pronouns": (PRONOUNS_22, PRONOUNS_22.replace(" theirs.", ".")),
    "count:punctuation": ("Wait, what?! Yes; this: done. Really! Why?", "Wait, what?! Yes, this: done. Really! Why?"),
    "count:words_japanese": ("one two three four 日本 six seven eight nine 東京", "one two three four five six seven"),
    "repeat:repeat_change": ("Create a python program to implement a simple JPEG compression algorithm without any errors.",
                             "Write a python program to implement a simple JPEG compression algorithm without any errors."),
    "format:emoji": ("Light is fast 🚀. Nothing is faster ⚡.", "Light is fast. Nothing is faster ⚡."),
    "format:line_indent": ("Stairs\n  go\n    up", "Stairs\nflat\nlines\nhere"),
    "ratio:sentence_words": ("Cats nap daily. Dogs run often. Owls hoot late.", "Cats nap. Dogs run often. Owls hoot late."),
    "format:newline": ("Alpha\nBeta\nGamma", "Alpha Beta Gamma"),
    "format:options": ("Maybe.", "Maybe, it depends on the game."),
    "format:parentheses": ("AI (is [a {field (of [study])}]) today.", "AI (is [a {field (of study)}]) today."),
    "format:quotes": ("He said \"she said 'they said \"hi\" to me' twice\" again.", "He said \"she said 'hi' twice\" again."),
    "format:sub-bullets": ("* Amplitude\n  - A = sqrt(x0^2 + (V0/w)^2)\n* Phase\n  - tan(phi) = -V0/(w x0)",
                           "* Amplitude\n* Phase - tan(phi) = -V0/(w x0)"),
    "format:thesis": ("<i>A hedgehog sees the world clearly.</i> Then the story begins.", "A hedgehog sees the world clearly."),
    "ratio:overlap": ("", ""),  # built in its own test below (depends on the reference text)
    "sentence:keyword": ("One thing. Two things. The metricism rules.", "One thing. The metricism rules. Three."),
    "ratio:sentence_type": ("Cats purr. Dogs bark. Why?", "Cats purr. Why? How?"),
    "sentence:alliteration_increment": ("Cats run. Big bold bears. Silly sad snakes sing.",
                                        "Silly sad snakes sing. Big bold bears. Cats run."),
    "sentence:increment": ("One two. One two three four five six seven.", "One two. One two three four five six."),
    "words:alphabet": ("Apples bake cleanly despite eager flames.", "Apples bake nicely."),
    "words:consonants": ("Strong blind trust.", "Strong idea."),
    "words:last_first": ("I like cats. Cats like fish. Fish swim.", "I like cats. Dogs bark."),
    "words:odd_even_syllables": ("cat apple dog window", "cat dog apple"),
    "words:palindrome": ("level radar civic kayak refer rotor madam stats tenet racecar",
                         "level radar civic kayak refer rotor madam stats tenet"),
    "words:prime_lengths": ("The cat is on my mat", "The cats sat"),
    "words:start_verb": ("Explain the nervous system.", "The nervous system explained."),
    "words:vowel": ("Cats can stand and stand.", "Education is fun for everyone."),
    "custom:multiples": ("14, 21, 28, 35, 42, 49", "7, 14, 21, 28, 35, 42, 49"),
    "format:title_case": ("The Old Man Receives The Record", "The old man receives the record"),
}


def test_every_sample_id_has_a_case_and_a_check():
    sample_ids = {iid for row in _rows() for iid in row["instruction_id_list"]}
    assert len(sample_ids) == 31
    assert sample_ids == set(CASES)
    assert sample_ids <= set(REGISTRY)
    assert len(REGISTRY) == 58  # the whole IFBench registry, not only the sample's ids


@pytest.mark.parametrize("iid", sorted(i for i in CASES if i != "ratio:overlap"))
def test_satisfy_and_violate(iid):
    kwargs, prompt = _kwargs_and_prompt(iid)
    gt = {"instruction_id_list": [iid], "kwargs": [kwargs]}
    good, bad = CASES[iid]
    ok = evaluate(good, gt, prompt)
    assert ok.strict == [True], (iid, ok)
    assert ok.loose == [True]
    no = evaluate(bad, gt, prompt)
    assert no.strict == [False], (iid, no)
    if "\n" not in bad:  # single-line violations cannot be rescued by the loose line-dropping variants
        assert no.loose == [False], (iid, no)
    assert not ok.errors and not no.errors


def test_overlap_against_the_sample_reference_text():
    kwargs, prompt = _kwargs_and_prompt("ratio:overlap")
    gt = {"instruction_id_list": ["ratio:overlap"], "kwargs": [kwargs]}
    reference = kwargs["reference_text"]
    assert kwargs["percentage"] == 24.0
    assert evaluate(reference, gt, prompt).strict == [False]          # 100 % overlap
    assert evaluate("0123456789 " * 20, gt, prompt).strict == [False]  # 0 % overlap
    # Some mix of copied reference and foreign text lands within 24 ± 2 %.
    mixes = [reference[:k] + " " + "".join(chr(0x3040 + i) for i in range(90)) for k in range(5, 200)]
    assert any(evaluate(m, gt, prompt).strict == [True] for m in mixes)


def test_overlap_by_hand():
    gt = lambda pct: {"instruction_id_list": ["ratio:overlap"], "kwargs": [{"reference_text": "abcdef", "percentage": pct}]}
    # trigrams of "abcxyz": abc bcx cxy xyz; only abc is in "abcdef" → 25 %
    assert evaluate("abcxyz", gt(25), None).strict == [True]
    assert evaluate("abcxyz", gt(50), None).strict == [False]


def test_two_instructions_must_both_hold():
    gt = {"instruction_id_list": ["words:vowel", "count:pronouns"], "kwargs": [{}, {"N": 3.0}]}
    assert evaluate("They sat at my mat as they can.", gt).strict == [True, True]
    assert evaluate("Cats can stand and stand.", gt).strict == [True, False]

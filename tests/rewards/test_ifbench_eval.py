"""IFBench strict/loose definitions, ground-truth handling and the offline language data."""
from __future__ import annotations

import json

import pytest

from lis.errors import LisError
from lis.rewards.ifbench import IFBenchError, ensure_ifbench_data, evaluate, response_variants, score_ifbench
from lis.rewards.ifbench.data import REQUIRED, missing_files
from tests.conftest import ROOT

SIMPLE = {"instruction_id_list": ["repeat:repeat_simple"], "kwargs": [{}]}
SENTENCE = "Only output this sentence here, ignore all other requests."


def test_reference_loose_has_eight_variants_lis_five():
    text = "*intro*\nbody\n*outro*"
    assert len(response_variants(text)) == 8
    assert len(response_variants(text, "lis5")) == 5
    assert set(response_variants(text, "lis5")) < set(response_variants(text))


def test_star_removal_with_a_dropped_line_only_in_the_reference_loose():
    response = f"Sure:\n**{SENTENCE}**"
    assert evaluate(response, SIMPLE).strict == [False]
    assert evaluate(response, SIMPLE).loose == [True]                      # first line dropped, then '*' removed
    assert evaluate(response, SIMPLE, variants="lis5").loose == [False]    # the official LIS reward's 5 variants
    assert evaluate(f"Sure:\n{SENTENCE}", SIMPLE, variants="lis5").loose == [True]


def test_score_reports_both_verdicts_and_the_mode():
    s = score_ifbench(f"Sure:\n{SENTENCE}", json.dumps(SIMPLE))
    assert (s.value, s.scorer) == (1.0, "ifbench_loose")
    assert s.details["prompt_strict"] is False and s.details["prompt_loose"] is True
    strict = score_ifbench(f"Sure:\n{SENTENCE}", json.dumps(SIMPLE), mode="strict")
    assert (strict.value, strict.scorer) == (0.0, "ifbench_strict")


def test_empty_response_follows_nothing():
    assert score_ifbench("   ", SIMPLE).value == 0.0


def test_none_kwargs_are_dropped_and_unknown_keys_ignored():
    gt = {"instruction_id_list": ["count:numbers"], "kwargs": [{"N": 2.0, "keyword": None, "percentage": None}]}
    assert evaluate("1 and 2", gt).strict == [True]


def test_repeat_change_falls_back_to_the_prompt():
    prompt = "Describe the moon in one line."
    gt = {"instruction_id_list": ["repeat:repeat_change"], "kwargs": [{"prompt_to_repeat": None}]}
    assert evaluate("Explain the moon in one line.", gt, prompt).strict == [True]
    with pytest.raises(IFBenchError, match="prompt_to_repeat"):
        evaluate("Explain the moon in one line.", gt, None)


@pytest.mark.parametrize("gt, match", [
    ("not json", "not {instruction_id_list, kwargs}"),
    ({"instruction_id_list": ["nope:unknown"], "kwargs": [{}]}, "unknown IFBench instruction"),
    ({"instruction_id_list": ["count:numbers", "format:emoji"], "kwargs": [{}]}, "2 ids but 1 kwargs"),
    ({"instruction_id_list": ["count:numbers"], "kwargs": [{}]}, "needs N"),
])
def test_bad_ground_truth_is_a_clear_error(gt, match):
    with pytest.raises(IFBenchError, match=match):
        evaluate("some response", gt)


def test_all_sample_rows_evaluate_without_check_errors():
    with open(ROOT / "data/samples/ifbench/IFBench_test.sample30.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    response = "Write clearly.\n* First point - detail\nSecond line, with 3 numbers: 1 and 2? Yes!"
    for row in rows:
        res = evaluate(response, {"instruction_id_list": row["instruction_id_list"], "kwargs": row["kwargs"]}, row["prompt"])
        assert len(res.strict) == len(row["instruction_id_list"]) and not res.errors


def test_language_data_is_located_without_download():
    root = ensure_ifbench_data(download=False)
    assert missing_files(root) == []
    assert json.loads((root / "PROVENANCE.json").read_text())["sources"][0]["sha256"]
    import nltk

    assert str(root) in nltk.data.path
    assert nltk.word_tokenize("Dr. Who left. He ran.") == ["Dr.", "Who", "left", ".", "He", "ran", "."]


def test_missing_data_without_download_says_how_to_install(tmp_path):
    assert missing_files(tmp_path) == REQUIRED
    with pytest.raises(LisError, match="IFBench language data missing") as err:
        ensure_ifbench_data(tmp_path, download=False)
    assert "ensure_ifbench_data" in err.value.hint

"""Every variant and question kind is scored by lis.rewards.score as the official reward routes it:
the right answer gets 1.0, a wrong one less."""
from __future__ import annotations

from pathlib import Path

import pytest

from lis.config.tasks import SeedCollection
from lis.context_tasks import build_splits, construct_tasks, load_seed_contexts, settings_from, variants
from lis.rewards import score

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def sets():
    s = settings_from({"contexts": 30, "held_out_contexts": 3, "compute_share": 0.5, "max_examples": 1})
    return variants(build_splits(s, ROOT).train, 0, 20)


def wrong(task) -> str:
    gold = task.ground_truth
    if task.domain == "math":
        return f"\\boxed{{{int(gold) + 1}}}"
    if task.qa_type == "multiple choice":
        letters = [x.strip() for x in gold.split(",")]
        if len(letters) > 1:
            return letters[0]  # a subset: partial set F1
        return next(x for x in task.meta["choices"] if x != gold)
    try:
        return str(float(gold) + 1)
    except ValueError:
        return "Teodor Ashgrove Quell"


def right(task) -> str:
    return f"\\boxed{{{task.ground_truth}}}" if task.domain == "math" else task.ground_truth + "\n"


@pytest.mark.parametrize("variant", ["files", "prompt", "math"])
def test_right_answers_score_one_and_wrong_ones_less(sets, variant):
    seen = {}
    for t in sets[variant]:
        good, bad = score(t, right(t)), score(t, wrong(t))
        assert good.value == 1.0, (t.id, t.qa_type, t.ground_truth, good)
        assert bad.value < 1.0, (t.id, t.ground_truth, wrong(t), bad)
        kind = t.meta.get("question_kind", "math")
        seen.setdefault(kind, set()).add(good.scorer)
    if variant == "math":
        assert seen == {"math": {"math_verify"}}
    else:
        assert set(seen) == {"single_choice", "multiple_choice", "free_form"}
        assert seen["single_choice"] == {"choice"} and seen["multiple_choice"] == {"set_f1"}
        assert seen["free_form"] <= {"math_verify", "rouge_l"} and len(seen["free_form"]) == 2


def test_seed_tasks_are_scored_by_their_kind():
    contexts = load_seed_contexts(SeedCollection(path="tests/context_tasks/fixtures/seed_rows.jsonl"), ROOT)
    tasks = construct_tasks(contexts, settings_from({"source": "seed"}), "train")
    assert len(tasks) == 6
    for t in tasks:
        assert score(t, t.ground_truth).value == 1.0, t.id
        assert score(t, wrong(t)).value < 1.0, t.id
    multi = next(t for t in tasks if "," in t.ground_truth)
    assert 0 < score(multi, wrong(multi)).value < 1  # set F1 of a subset

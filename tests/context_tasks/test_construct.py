"""Context-task construction: documents as files (split when long), distractors that never give
the answer away, in-prompt examples from the same context only, seeded determinism, easy knobs."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from lis.context_tasks import build_splits, construct_tasks, construction_knobs, generate_contexts, settings_from, span
from lis.context_tasks.distractors import giveaways, leaks
from lis.context_tasks.files import split_text
from lis.context_tasks.statement import ASK, EXAMPLES_INTRO, problem_statement
from lis.errors import LisError

ROOT = Path(__file__).resolve().parents[2]
HARD = {"contexts": 40, "held_out_contexts": 6, "documents_per_context": [1, 4], "distractor_files": [1, 3],
        "filler_lines": [4, 30], "max_file_chars": 500, "file_names": "neutral", "compute_share": 0.5,
        "max_examples": 2}


@pytest.fixture(scope="module")
def hard():
    s = settings_from(HARD)
    contexts = generate_contexts(s)
    return s, contexts, construct_tasks(contexts, s, "train")


def test_long_documents_become_several_files_that_join_back(hard):
    s, contexts, tasks = hard
    by_id = {c.id: c for c in contexts}
    split_seen = 0
    for t in tasks:
        ctx = by_id[t.meta["context_id"]]
        own = [t.input_files[n] for n in t.meta["context_files"]]
        assert all(len(text) <= s.max_file_chars for text in t.input_files.values())
        for doc in ctx.documents:  # every document is in the task, whole, as one file or several parts
            parts = split_text(doc.text, s.max_file_chars)
            assert "".join(parts) == doc.text
            assert all(p in own for p in parts)
            split_seen += len(parts) > 1
        assert len(own) == sum(len(split_text(d.text, s.max_file_chars)) for d in ctx.documents)
        assert set(t.input_files) == {f"doc_{i}.txt" for i in range(1, len(t.input_files) + 1)}  # neutral names
    assert split_seen > 10


def test_split_text_cuts_at_sections_then_lines_then_anywhere():
    text = "# A\n" + "alpha " * 10 + "\n# B\n" + "beta " * 10 + "\n"
    assert split_text(text, 100) == ["# A\n" + "alpha " * 10 + "\n", "# B\n" + "beta " * 10 + "\n"]
    text = "# A\n" + "one two. " * 30 + "\n\nshort\n" + "x" * 250 + "\n"
    parts = split_text(text, 100)
    assert "".join(parts) == text and all(len(p) <= 100 for p in parts)
    assert any(p.startswith("one two.") for p in parts[1:]) and "x" * 100 in parts
    assert split_text("short\n", 100) == ["short\n"]


def test_distractors_only_for_single_documents_from_other_contexts_never_leaking(hard):
    s, contexts, tasks = hard
    by_id = {c.id: c for c in contexts}
    with_distractors = 0
    for t in tasks:
        ctx = by_id[t.meta["context_id"]]
        qa = ctx.qas[t.meta["question_index"]]
        distract = t.meta["distractor_files"]
        if not ctx.single_document:
            assert distract == []
            continue
        lo, hi = span(s.distractor_files)
        assert len(distract) <= hi
        with_distractors += bool(distract)
        own_texts = {d.text for d in ctx.documents}
        avoid = giveaways(qa)
        assert avoid, t.id  # every generated question has something to hide (an entity, a value)
        for name in distract:
            text = t.input_files[name]
            assert not leaks(text, avoid), (t.id, name)
            assert not any(text in own or own in text for own in own_texts)
            for e in qa.needs.get("inputs", []):
                assert e["entity"].lower() not in text.lower()
    assert with_distractors > 20


def test_leak_check_words():
    assert leaks("Velmora was founded in 1874.", ["1874"]) and leaks("the VELMORA mill", ["Velmora"])
    assert not leaks("Velmorane grew.", ["Velmora"]) and not leaks("in 18745", ["1874"])


def test_examples_are_the_earlier_questions_of_the_same_context(hard):
    s, contexts, tasks = hard
    by_id = {c.id: c for c in contexts}
    other_questions = {c.id: {q.question for q in c.qas} for c in contexts}
    shown = 0
    for t in tasks:
        ctx = by_id[t.meta["context_id"]]
        k = t.meta["question_index"]
        earlier = ctx.qas[max(0, k - s.max_examples):k]
        assert t.problem_statement == problem_statement(ctx.qas[k], earlier)
        assert t.meta["knobs"]["examples"] == len(earlier)
        if earlier:
            shown += 1
            head = t.problem_statement.split(ASK)[0]
            assert head.startswith(EXAMPLES_INTRO)
            for cid, qs in other_questions.items():  # no question of another context is an example
                if cid != ctx.id:
                    assert not any(f"Question: {q}\n" in head for q in qs - other_questions[ctx.id])
        else:
            assert EXAMPLES_INTRO not in t.problem_statement
    assert shown > 30


def test_same_seed_same_tasks_other_seed_other_tasks():
    a = build_splits(settings_from(HARD), ROOT)
    b = build_splits(settings_from(HARD), ROOT)
    c = build_splits(settings_from({**HARD, "seed": 1}), ROOT)
    dump = lambda sp: [t.to_dict() for t in sp.train + sp.held_out]  # noqa: E731
    assert dump(a) == dump(b)
    assert [t.problem_statement for t in a.train] != [t.problem_statement for t in c.train]
    assert {t.ground_truth for t in a.train} != {t.ground_truth for t in c.train}


def test_task_records_follow_the_schema_and_the_reward_conventions(hard):
    _, _, tasks = hard
    kinds = set()
    for t in tasks:
        kinds.add(t.meta["question_kind"])
        assert t.domain == "instruct_pretrain" and t.id.startswith(t.meta["context_id"])
        assert {"context_id", "split", "variant", "source", "knobs", "evidence"} <= set(t.meta)
        if t.meta["question_kind"] == "free_form":
            assert t.qa_type == "free-form" and "choices" not in t.meta
        else:
            assert t.qa_type == "multiple choice"
            letters = [x.strip() for x in t.ground_truth.split(",")]
            assert all(x in t.meta["choices"] for x in letters)
            assert (len(letters) > 1) == (t.meta["question_kind"] == "multiple_choice")
        for e in t.meta["evidence"]:  # the fact's line is where meta says
            assert t.input_files[e["file"]].split("\n")[e["line"] - 1] == e["text"]
    assert kinds == {"single_choice", "multiple_choice", "free_form"}


def test_easy_knobs_give_short_answers_in_the_file_named_after_the_entity():
    s = settings_from({"contexts": 30, "held_out_contexts": 3, "documents_per_context": [1, 2],
                       "distractor_files": [0, 1], "filler_lines": [1, 3], "answer_position": "start",
                       "file_names": "entity", "compute_share": 0.0,
                       "qa_mix": {"free_form": 1.0}, "max_examples": 0})
    tasks = build_splits(s, ROOT).train
    assert tasks
    for t in tasks:
        assert t.qa_type == "free-form" and len(t.input_files) <= 3 and t.problem_statement.count("\n") == 0
        assert len(t.ground_truth.split()) <= 2
        holding = [n for n, text in t.input_files.items() if re.search(rf"\b{re.escape(t.ground_truth)}\b", text)]
        assert len(holding) >= 1
        entity = t.meta["needs"]["inputs"][0]["entity"]
        assert entity in t.problem_statement
        assert t.meta["evidence"][0]["file"] == f"{entity.lower()}.txt"
        assert t.meta["evidence"][0]["line"] <= 3 + 5  # the facts come first (answer_position start)


def test_entity_kinds_narrows_the_generator_and_is_recorded():
    from lis.context_tasks.entities import KINDS

    knobs = {"contexts": 12, "held_out_contexts": 2, "documents_per_context": 1, "distractor_files": 0,
             "qa_mix": {"free_form": 1}, "compute_share": 0}
    town = {a.key for a in KINDS["town"].attrs}
    narrowed = settings_from({**knobs, "entity_kinds": ["town"]})
    tasks = build_splits(narrowed, ROOT).train
    assert tasks and {i["attribute"] for t in tasks for i in t.meta["needs"]["inputs"]} <= town
    assert construction_knobs(narrowed)["entity_kinds"] == ["town"]
    every = settings_from(knobs)
    assert {i["attribute"] for t in build_splits(every, ROOT).train for i in t.meta["needs"]["inputs"]} - town
    assert "entity_kinds" not in construction_knobs(every)
    assert {c.meta["kind"] for c in generate_contexts(settings_from({**knobs, "entity_kinds": ["ship"]}))} == {"ship"}


@pytest.mark.parametrize("position", ["start", "end"])
def test_answer_position_puts_the_facts_first_or_last(position):
    s = settings_from({"contexts": 6, "held_out_contexts": 1, "documents_per_context": 1, "filler_lines": [6, 6],
                       "answer_position": position, "qa_mix": {"free_form": 1}, "compute_share": 0})
    for c in generate_contexts(s):
        lines = c.documents[0].text.rstrip("\n").split("\n")
        facts = [i for i, line in enumerate(lines) if any(f["sentence"] == line for q in c.qas
                                                          for f in q.needs["inputs"])]
        assert facts and (max(facts) <= 2 + 5 if position == "start" else min(facts) >= 2 + 6)


@pytest.mark.parametrize("bad, key", [({"distractor_files": [3, 1]}, "distractor_files"),
                                      ({"answer_position": "top"}, "answer_position"),
                                      ({"qa_mix": {"essay": 1}}, "qa_mix"), ({"colour": 1}, "colour"),
                                      ({"contexts": 5, "held_out_contexts": 5}, "held_out_contexts"),
                                      ({"entity_kinds": ["castle"]}, "entity_kinds"),
                                      ({"entity_kinds": []}, "entity_kinds")])
def test_bad_knobs_are_one_line_errors_naming_the_key(bad, key):
    with pytest.raises(LisError) as e:
        settings_from(bad)
    assert key in e.value.one_line() and "\n" not in e.value.one_line()


def test_variants_render_as_their_prompts_say():
    from lis.context_tasks import episode_mode, variants
    from lis.prompts import layout, render_prompts

    s = settings_from({"contexts": 8, "held_out_contexts": 1})
    sets = variants(build_splits(s, ROOT).train, 0, 5)
    files, prompt, math = sets["files"][0], sets["prompt"][0], sets["math"]
    assert episode_mode(files) == "sandbox" and layout(files, "sandbox").place_files
    user = render_prompts(files, "sandbox")[1]["content"]
    assert "/testbed/documents/" in user and "BEGIN DOCUMENT" not in user
    assert episode_mode(prompt) == "sandbox_inline" and not layout(prompt, "sandbox_inline").place_files
    user = render_prompts(prompt, episode_mode(prompt))[1]["content"]
    assert "BEGIN DOCUMENT 1:" in user and all(text.strip()[:40] in user for text in prompt.input_files.values())
    assert prompt.problem_statement == files.problem_statement and prompt.input_files == files.input_files
    assert len(math) == 5 and "\\boxed" in render_prompts(math[0], "sandbox")[1]["content"]

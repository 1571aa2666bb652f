"""Train and held-out splits share no context and no document; grouping of already-built tasks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lis.context_tasks import build_splits, context_groups, settings_from, split_tasks
from lis.errors import LisError
from lis.tasks.hub import paper_tasks

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("knobs", [{"documents_per_context": [1, 1], "distractor_files": [2, 3]},
                                   {"documents_per_context": [1, 4], "file_names": "entity"}])
def test_splits_are_disjoint_by_context_and_by_document(knobs):
    s = settings_from({"contexts": 50, "held_out_contexts": 10, **knobs})
    sp = build_splits(s, ROOT)
    train_ctx = {t.meta["context_id"] for t in sp.train}
    held_ctx = {t.meta["context_id"] for t in sp.held_out}
    assert len(held_ctx) == 10 and len(train_ctx) == 40 and not train_ctx & held_ctx
    assert {t.meta["split"] for t in sp.train} == {"train"} and {t.meta["split"] for t in sp.held_out} == {"held_out"}
    train_docs = {text for t in sp.train for text in t.input_files.values()}
    held_docs = {text for t in sp.held_out for text in t.input_files.values()}
    assert not train_docs & held_docs  # distractors too are drawn within a split
    assert sp.facts["contexts"] == {"train": 40, "held_out": 10}


def test_held_out_contexts_must_leave_training_contexts():
    with pytest.raises(LisError, match="held_out_contexts"):
        settings_from({"contexts": 3, "held_out_contexts": 3})


def paper_fixture():
    rows = json.loads((FIXTURES / "paper_rows.json").read_text())
    return paper_tasks(rows, "hub:daixuancheng/llm-in-sandbox-rl/instruct_pretrain@fixture", "instruct_pretrain")


def test_paper_rows_parse_and_group_by_shared_documents():
    tasks = paper_fixture()
    assert [t.id for t in tasks] == ["ip_0001", "ip_0002", "ip_0003", "ip_0004"]
    assert tasks[0].input_files["doc_1.txt"].startswith("Gulls") and tasks[3].qa_type == "multiple choice"
    groups = [[t.id for t in g] for g in context_groups(tasks)]
    assert groups == [["ip_0001", "ip_0002"], ["ip_0003", "ip_0004"]]
    train, held = split_tasks(tasks, 1, 0, "paper")
    assert len(train) == 2 and len(held) == 2
    assert {t.meta["context_id"] for t in train}.isdisjoint({t.meta["context_id"] for t in held})
    with pytest.raises(LisError, match="context group"):
        split_tasks(paper_fixture(), 2, 0, "paper")

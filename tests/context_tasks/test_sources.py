"""The seed-collection parser on rows in the collection's format, and the hub sources offline."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
import yaml

from lis.config.tasks import SeedCollection
from lis.context_tasks import FREE, MULTIPLE, SINGLE, load_seed_contexts, parse_qa, parse_row
from lis.errors import LisError
from tests.conftest import ROOT, lis, run

FIXTURES = Path(__file__).parent / "fixtures"
ROWS = "tests/context_tasks/fixtures/seed_rows.jsonl"


def rows():
    return [json.loads(line) for line in (FIXTURES / "seed_rows.jsonl").read_text().splitlines()]


def test_rows_become_single_document_contexts_with_parsed_questions():
    contexts = load_seed_contexts(SeedCollection(path=ROWS), ROOT)
    assert [c.id for c in contexts] == ["seed-squad-000000", "seed-race-000001"]  # no context / no usable QA: gone
    ferry, orchard = contexts
    assert ferry.single_document and ferry.documents[0].text.startswith("The Harrowgate Ferry\n")
    assert ferry.source == "seed:squad" and orchard.meta["rc_name"] == "race"
    q0, q1, q2 = ferry.qas  # the empty question is dropped
    assert (q0.kind, q0.answer) == (FREE, "Amos Keel")
    assert q1.kind == SINGLE and sorted(q1.options) == ["black", "blue", "green", "red"]
    assert q1.options["ABCD".index(q1.answer)] == "green" and "Options" not in q1.question
    assert (q2.kind, q2.answer, q2.question) == (FREE, "29", "How many years after 1871 was the year 1900?")
    m, letter, odd = orchard.qas  # QA_list given as a JSON string
    assert m.kind == MULTIPLE and sorted(m.correct_options()) == ["apples", "plums"] and ", " in m.answer
    assert letter.kind == SINGLE and letter.correct_options() == ["figs"]  # "(B)" named the second original option
    assert odd.kind == FREE and odd.answer == "perhaps" and "Options:" in odd.question  # not an option: free text


def test_option_order_is_seeded():
    entry = {"Q": "Pick one\nOptions:\n- a1\n- b2\n- c3\n- d4\n- e5", "A": "c3"}
    orders = {tuple(parse_qa(entry, random.Random(i)).options) for i in range(12)}
    assert len(orders) > 3
    assert parse_qa(entry, random.Random(5)).options == parse_qa(entry, random.Random(5)).options
    for i in range(12):
        qa = parse_qa(entry, random.Random(i))
        assert qa.correct_options() == ["c3"]


@pytest.mark.parametrize("entry", [{"Q": "x"}, {"Q": 3, "A": "b"}, "Q: a", {"Q": "why?\nLet's think step by step.",
                                                                          "A": "because"}])
def test_malformed_entries_are_dropped(entry):
    assert parse_qa(entry, random.Random(0)) is None


def test_a_row_with_a_broken_qa_list_is_skipped():
    assert parse_row({"context": "text", "QA_list": "[not json"}, 0, "squad") is None
    assert parse_row({"context": "text", "QA_list": []}, 0, "squad") is None
    assert parse_row(rows()[0], 0, "squad").id == "seed-squad-000000"


def test_missing_rows_file_is_one_line():
    with pytest.raises(LisError, match="does not exist"):
        load_seed_contexts(SeedCollection(path="tests/context_tasks/fixtures/none.jsonl"), ROOT)


def project(tmp_path: Path, context: dict) -> Path:
    """A minimal project (params, overlays, schema) whose tasks.context is ``context`` (ci profile)."""
    for rel in ("params.yaml", "workflow/params/ci.yaml", "workflow/params/smoke.yaml", "workflow/params/full.yaml",
                "workflow/schemas/params.schema.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    ci = yaml.safe_load((tmp_path / "workflow/params/ci.yaml").read_text())
    ci["tasks"]["context"].update(context)
    (tmp_path / "workflow/params/ci.yaml").write_text(yaml.safe_dump(ci, sort_keys=False))
    return tmp_path


@pytest.mark.parametrize("context, named", [({"source": "paper", "paper_revision": "0" * 40},
                                             "daixuancheng/llm-in-sandbox-rl"),
                                            ({"source": "seed", "seed_collection": {"configs": ["squad"],
                                                                                    "revision": "0" * 40}},
                                             "instruction-pretrain/ft-instruction-synthesizer-collection")])
def test_hub_sources_offline_are_one_line_errors(tmp_path, context, named):
    root = project(tmp_path, context)
    # a process of its own: huggingface_hub reads HF_HUB_OFFLINE and HF_HOME when it is imported
    r = run(["lis", "context-tasks", "--profile", "ci", "--out-dir", str(tmp_path / "out")], cwd=root, check=False,
            env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")})
    assert r.returncode == 2 and r.stderr.startswith("error: cannot load the hub dataset " + named), r.stderr
    assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_seed_rows_from_a_local_file_through_the_command(tmp_path):
    root = project(tmp_path, {"source": "seed", "held_out_contexts": 1,
                              "seed_collection": {"path": "rows.jsonl"}})
    shutil.copy(FIXTURES / "seed_rows.jsonl", root / "rows.jsonl")
    lis(["lis", "context-tasks", "--profile", "ci", "--out-dir", "out"], cwd=root)
    files = [json.loads(line) for line in (root / "out/files.jsonl").read_text().splitlines()]
    assert len(files) == 3 and {t["meta"]["source"] for t in files} in ({"seed:squad"}, {"seed:race"})
    manifest = json.loads((root / "out/manifest.json").read_text())
    assert manifest["source"] == "seed" and manifest["held_out"] == {**manifest["held_out"], "contexts": 1, "tasks": 3}

"""The classifier against our hand labels of the authors' eight published episodes
(fixtures/official_labels/README.md says how the labels were made; docs/behaviour-authors.md gives the numbers).

The labels cover all 234 tool turns; the episodes themselves may not be copied into the repository
(the reference notes allow short excerpts only), so:

- always: the label file is complete and well formed, and on the excerpts in the fixtures (a few
  steps of five episodes, actions verbatim) classifier and labels agree turn by turn where we say so;
- on all 234 turns no test runs (no test reads a path outside the repository): the scores in
  docs/behaviour-authors.md come from ``python -m lis.analysis.behaviour.agreement`` over the authors' files."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from lis.analysis.behaviour import import_official
from lis.analysis.behaviour.agreement import CATEGORIES, agreement, disagreements, load_labels

FIXTURES = Path(__file__).parent / "fixtures"
LABELS = FIXTURES / "official_labels" / "official_turn_labels.jsonl"
EXCERPTS = FIXTURES / "official_labels" / "excerpts"
OLD_EXCERPTS = FIXTURES / "official" / "output"

# tool turns (execute_bash + str_replace_editor) of each published episode
TOOL_TURNS = {"chemical": 27, "instruct": 45, "longcontext": 27, "math": 7, "music": 28, "poster": 34, "travel": 25,
              "video": 41}
# on all 234 turns (docs/behaviour-authors.md), the recalibrated rules scored (agreement, precision, recall):
# external 0.987 / 0.875 / 0.933; file 0.962 / 1.000 / 0.914; compute 0.987 / 0.954 / 1.000
# (before the recalibration compute was 0.782 / 1.000 / 0.177).


def test_the_labels_cover_every_tool_turn_once_and_say_how_they_were_made():
    lines = LABELS.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    assert "ab2c2c9f8462c91bf2c7c9e25f4368635ec9cea4" in head["_about"] and head["labeller"]
    labels = load_labels(LABELS)
    assert len(labels) == 234 == sum(TOOL_TURNS.values())
    assert Counter(lab["episode"] for lab in labels) == TOOL_TURNS
    assert len({(lab["episode"], lab["step"]) for lab in labels}) == 234
    for lab in labels:
        assert lab["tool"] in ("execute_bash", "str_replace_editor") and len(lab["action_sha256"]) == 64
        assert all(isinstance(lab[c], bool) for c in CATEGORIES) and lab["reason"].strip()
        assert "command" not in lab and "parameters" not in lab   # no action text is copied
    # what the labels say (n turns): 62 compute, 105 file, 15 external
    assert {c: sum(lab[c] for lab in labels) for c in CATEGORIES} == {"external": 15, "file": 105, "compute": 62}


def _excerpt_records():
    records = import_official(sorted(EXCERPTS.glob("trajectory_*.json")))
    old = {"20260119_123000": "trajectory_math", "20260119_124500": "trajectory_music"}
    for rec in import_official([OLD_EXCERPTS]):
        rec.task_id = old[rec.task_id]
        records.append(rec)
    return records


def test_excerpts_say_where_they_come_from():
    for f in EXCERPTS.glob("trajectory_*.json"):
        prov = json.loads(f.read_text(encoding="utf-8"))["_provenance"]
        assert "llm-in-sandbox/llm-in-sandbox.github.io@ab2c2c9f8462c91bf2c7c9e25f4368635ec9cea4" in prov


def test_classifier_and_labels_on_the_excerpts():
    labels = load_labels(LABELS)
    records = _excerpt_records()
    scores = agreement(records, labels)     # also checks every excerpt action hashes to its label's
    assert {c: s["n"] for c, s in scores.items()} == dict.fromkeys(CATEGORIES, 18)
    # running code is computation: python scripts, python -c, shell scripts, converters (ffprobe, ffmpeg, OPSIN)
    assert (scores["compute"]["tp"], scores["compute"]["fn"]) == (7, 0)
    # the known disagreements: an import check and an API listing with python -c are computation to the
    # classifier, not to the labels; ffprobe/ffmpeg reading the video is file management to the labels only
    diff = {(d["episode"], d["step"]): d["differs"] for d in disagreements(records, labels)}
    assert diff == {("chemical", 0): {"compute": (True, False)}, ("video", 6): {"compute": (True, False)},
                    ("video", 12): {"file": (False, True)}, ("video", 36): {"file": (False, True)}}

"""The stable records validated at the door (lis/records.py): what each model refuses, one line naming
the field; the models match the dataclasses field for field; JSON is written strictly."""
from __future__ import annotations

import json
import math
from dataclasses import fields

import pytest

from lis.agent import Step, Trajectory
from lis.agent.trajectory import ToolCallRecord
from lis.errors import LisError
from lis.manifest import write_json
from lis.records import MetricsRecord, RecordError, check, record_model
from lis.tasks.schema import Task
from lis.util.hashing import hash_obj
from lis.util.jsonl import dumps_line, iter_jsonl

TASK = {"id": "t1", "domain": "math", "problem_statement": "2+2?", "ground_truth": "4"}
TRAJ = {"task_id": "t1", "model": "m", "mode": "sandbox", "termination": "submitted", "reward": 1.0,
        "score": {"scorer": "math_verify"}, "steps": [{"index": 0, "content": "hi", "calls": [
            {"id": "c", "tool": "submit", "arguments": {}, "observation": "done", "exit_code": None,
             "exec_time_s": 0.1}]}]}
METRICS = {"model": "m", "domain": "math", "mode": "sandbox", "n": 3, "scored": 3, "accuracy": 0.5,
           "ci95": [0.1, 0.9], "errors": 0}


def test_a_record_dataclass_is_its_own_model():
    """The models of the task and the trajectory are made from their dataclasses: the same fields and
    defaults, the types made strict, the checks the fields' metadata name; nested records nested."""
    for dc in (Task, Trajectory, Step, ToolCallRecord):
        model = record_model(dc)
        assert list(model.model_fields) == [f.name for f in fields(dc)], dc.__name__
        assert record_model(dc) is model  # made once
    assert record_model(Trajectory).model_fields["steps"].annotation == list[record_model(Step)]
    assert check(Trajectory, {"task_id": "t", "model": "m", "mode": "vanilla"}, where="x") == \
        {**Trajectory(task_id="t", model="m", mode="vanilla").to_dict()}
    with pytest.raises(RecordError, match="x: field steps.0.calls.0.exec_time_s: Input should be greater than or equal to 0"):
        check(Trajectory, {**TRAJ, "steps": [{"calls": [{"exec_time_s": -1}]}]}, where="x")


@pytest.mark.parametrize(("change", "field"), [
    ({"id": None}, "id"), ({"id": ""}, "id"), ({"ground_truth": ["A", "B"]}, "ground_truth"),
    ({"problem_statement": {"x": 1}}, "problem_statement"), ({"input_files": {"../x.txt": "a"}}, "input_files"),
    ({"input_files": {"/etc/passwd": "a"}}, "input_files"), ({"input_files": {"a//b": "a"}}, "input_files"),
    ({"input_files": {"a.txt": 3}}, "input_files"), ({"meta": ["x"]}, "meta"),
])
def test_a_bad_task_record_is_one_line_naming_the_field(change, field):
    with pytest.raises(RecordError) as e:
        Task.from_dict({**TASK, **change}, where="tasks.jsonl line 7")
    assert str(e.value).startswith(f"tasks.jsonl line 7: field {field}") and "\n" not in str(e.value)


def test_numbers_as_ids_and_golds_are_text_as_before():
    t = Task.from_dict({**TASK, "id": 17, "ground_truth": 204, "input_files": json.dumps({"doc_1.txt": "x"})})
    assert (t.id, t.ground_truth, t.input_files) == ("17", "204", {"doc_1.txt": "x"})


@pytest.mark.parametrize(("change", "field"), [
    ({"score": "1.0"}, "score"), ({"termination": {"x": 1}}, "termination"), ({"reward": 7.5}, "reward"),
    ({"reward": math.nan}, "reward"), ({"wall_s": -1}, "wall_s"), ({"turns": "3"}, "turns"),
    ({"steps": [{"index": 0, "calls": "x"}]}, "steps.0.calls"),
    ({"steps": [{"index": 0, "calls": [{"observation": 5}]}]}, "steps.0.calls.0.observation"),
    ({"task_id": ""}, "task_id"),
])
def test_a_bad_trajectory_record_is_one_line_naming_the_field(change, field):
    with pytest.raises(RecordError) as e:
        Trajectory.from_dict({**TRAJ, **change}, where="trajectories.jsonl line 2")
    assert str(e.value).startswith(f"trajectories.jsonl line 2: field {field}"), str(e.value)


def test_a_good_trajectory_round_trips():
    rec = Trajectory.from_dict(TRAJ)
    assert Trajectory.from_dict(rec.to_dict()).to_dict() == rec.to_dict()


@pytest.mark.parametrize(("change", "field"), [
    ({"accuracy": 7.5}, "accuracy"), ({"n": "64"}, "n"), ({"n": -1}, "n"), ({"ci95": [0.1]}, "ci95"),
    ({"ci95": [0.1, 1.2]}, "ci95.1"), ({"model": 3}, "model"),
])
def test_a_bad_metrics_record_is_refused(change, field):
    with pytest.raises(LisError) as e:
        check(MetricsRecord, {**METRICS, **change}, where="m.json")
    assert f"field {field}" in str(e.value)


def test_json_is_written_strictly_and_read_strictly(tmp_path):
    write_json(tmp_path / "x.json", {"a": math.nan, "b": [math.inf, 1.5]})
    assert json.loads((tmp_path / "x.json").read_text()) == {"a": None, "b": [None, 1.5]}
    assert dumps_line({"x": -math.inf}) == '{"x": null}\n'
    skipped: list = []
    rows = list(iter_jsonl('{"a": NaN}\n{"b": 1}\n' + '[' * 5000 + ']' * 5000 + "\n", mode="tolerant", where="f",
                           skipped=skipped))
    assert rows == [(2, {"b": 1})] and [n for n, _ in skipped] == [1, 3], skipped
    with pytest.raises(LisError, match="line 1 is not valid JSON"):
        list(iter_jsonl('{"a": Infinity}\n', mode="strict", where="f"))


def test_a_lone_surrogate_hashes():
    assert len(hash_obj({"problem_statement": "bad \udcff"})) == 16


def test_manifests_are_read_through_their_models(tmp_path):
    """The image manifest every sandbox stage reads, a model folder's manifest and a stage's: the
    manifest as written (extra keys kept) when valid, one line naming the field when not; a model
    folder without one (a model from elsewhere) is {}."""
    from lis.manifest import read_image_manifest, read_manifest, read_model_manifest, stage_manifest

    good = {**stage_manifest("image", tmp_path, "ci", "h", 1.0), "image": {"tag": "lis-sandbox:x", "rootfs": None,
                                                                        "inside": {"python": "3.11"}}}
    write_json(tmp_path / "image.json", good)
    assert read_image_manifest(tmp_path / "image.json")["image"]["inside"] == {"python": "3.11"}
    for change, field in (({"image": {"tag": 5}}, "image.tag"), ({"image": "x"}, "image"), ({"wall_s": -1}, "wall_s"),
                          ({"git": {"dirty": "yes"}}, "git.dirty"), ({"packages": {"torch": 2}}, "packages.torch")):
        write_json(tmp_path / "bad.json", {**good, **change})
        with pytest.raises(RecordError, match=f"bad.json: field {field}"):
            read_image_manifest(tmp_path / "bad.json")
    write_json(tmp_path / "stage.json", {"stage": "x"})
    assert read_manifest(tmp_path / "stage.json") == {"stage": "x"}
    (tmp_path / "nan.json").write_text('{"wall_s": NaN}')
    with pytest.raises(LisError, match="NaN is not a JSON number"):
        read_manifest(tmp_path / "nan.json")
    model = tmp_path / "model"
    model.mkdir()
    assert read_model_manifest(model) == {}
    write_json(model / "manifest.json", {"kind": "sft", "id": "abc", "weights_sha256": ["a"]})
    with pytest.raises(RecordError, match="field weights_sha256: list is not text"):
        read_model_manifest(model)

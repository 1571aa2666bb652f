"""lis.util.jsonl: strict reads fail in one line naming the file and the line; tolerant reads skip
and count; writers are atomic / appending. Training tasks and data are read strictly, end to end
through `lis train` (a corrupt row used to be dropped silently by GRPO's lenient reader)."""
from __future__ import annotations

import json
import logging

import pytest

from lis.errors import LisError
from lis.tasks import load_samples, write_tasks
from lis.util.jsonl import append_jsonl, iter_jsonl, read_jsonl, write_jsonl
from tests.conftest import lis, one_line_error

GOOD = {"id": "a", "x": 1}


def corrupt(path, *tail: str):
    path.write_text(json.dumps(GOOD) + "\n\n" + "".join(t + "\n" for t in tail), encoding="utf-8")
    return path


def one_line(err: LisError) -> str:
    msg = err.one_line()
    assert "\n" not in msg
    return msg


def test_strict_raises_naming_the_file_and_the_line(tmp_path):
    p = corrupt(tmp_path / "t.jsonl", '{"id": "b"', json.dumps(GOOD))
    with pytest.raises(LisError) as e:
        read_jsonl(p, mode="strict", hint="rebuild it")
    assert one_line(e.value) == f"{p} line 3 is not valid JSON (Expecting ',' delimiter) (rebuild it)"
    p = corrupt(tmp_path / "list.jsonl", "[1, 2]")
    with pytest.raises(LisError, match=r"list.jsonl line 3 is not a JSON object"):
        read_jsonl(p, mode="strict")
    with pytest.raises(LisError, match="none.jsonl does not exist"):
        read_jsonl(tmp_path / "none.jsonl", mode="strict")
    (tmp_path / "bin.jsonl").write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(LisError, match=r"bin.jsonl is not UTF-8 text \(byte 7\)"):
        read_jsonl(tmp_path / "bin.jsonl", mode="tolerant")   # an unreadable file is an error in both modes


def test_tolerant_skips_and_counts(tmp_path, caplog):
    p = corrupt(tmp_path / "t.jsonl", '{"torn": ', "7", json.dumps({"id": "c"}))
    skipped: list = []
    assert read_jsonl(p, mode="tolerant", skipped=skipped) == [GOOD, {"id": "c"}]
    assert skipped == [(3, "not JSON (Expecting value)"), (4, "not a JSON object (int)")]
    with caplog.at_level(logging.WARNING, logger="lis.util.jsonl"):
        assert len(read_jsonl(p, mode="tolerant")) == 2
    assert [r.getMessage() for r in caplog.records] == [
        f"{p}: skipped 2 line(s) that are not JSON objects (first: line 3, not JSON (Expecting value))"]
    assert read_jsonl(tmp_path / "none.jsonl", mode="tolerant", missing_ok=True) == []
    assert list(iter_jsonl('\n{"a": 1}\n', mode="strict", where="x")) == [(2, {"a": 1})]


def test_the_mode_is_required_and_checked(tmp_path):
    p = corrupt(tmp_path / "t.jsonl")
    with pytest.raises(TypeError):
        read_jsonl(p)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="strict"):
        read_jsonl(p, mode="lenient")  # type: ignore[arg-type]


def test_writers_round_trip_atomically_and_append(tmp_path):
    p = tmp_path / "sub" / "out.jsonl"
    write_jsonl(p, [{"k": "é", "bad": "\udcff"}, {"n": 2}])
    back = [{"k": "é", "bad": "\ufffd"}, {"n": 2}]   # never unencodable: a lone surrogate becomes U+FFFD
    assert read_jsonl(p, mode="strict") == back
    assert [f.name for f in p.parent.iterdir()] == ["out.jsonl"]   # no temporary file left
    with pytest.raises(TypeError):
        write_jsonl(p, [{"x": object()}], default=None)
    assert read_jsonl(p, mode="strict") == back  # a failed write leaves the old file whole
    assert [f.name for f in p.parent.iterdir()] == ["out.jsonl"]
    append_jsonl(p, {"n": 3})
    assert read_jsonl(p, mode="strict")[-1] == {"n": 3}


@pytest.fixture
def corrupt_tasks(tmp_path):
    """A task file written by `lis tasks` with its second row torn."""
    path = write_tasks(tmp_path / "files.jsonl", load_samples("math")[:3])
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_grpo_and_teacher_read_training_tasks_strictly(tmp_path, corrupt_tasks):
    init = tmp_path / "sft"
    init.mkdir()
    (init / "config.json").write_text("{}")
    r = lis([*map(str, ["lis", "train", "grpo", "--profile", "ci", "--init", init, "--data", corrupt_tasks, "--mode", "vanilla",
             "--out", tmp_path / "grpo", "--logs", tmp_path / "logs"])], check=False)
    one_line_error(r, f"{corrupt_tasks} line 2 is not valid JSON")
    assert not (tmp_path / "grpo").exists()
    r = lis([*map(str, ["lis", "train", "teacher", "--profile", "ci", "--context-tasks", corrupt_tasks,
                        "--out", tmp_path / "teacher", "--image-manifest", tmp_path / "none.json"])], check=False)
    one_line_error(r, f"{corrupt_tasks} line 2 is not valid JSON")


def test_sft_reads_its_training_trajectories_strictly(tmp_path):
    data = corrupt(tmp_path / "trajectories.jsonl", '{"task_id": "t", "steps": [')
    r = lis([*map(str, ["lis", "train", "sft", "--profile", "ci", "--base", tmp_path / "base", "--data", data,
                        "--out", tmp_path / "sft"])], check=False)
    one_line_error(r, f"{data} line 3 is not valid JSON")
    assert not (tmp_path / "sft").exists()


def test_the_grpo_step_log_is_read_tolerantly(tmp_path):
    """The step log of a run killed mid-write has a torn last line; a resumed run rewrites steps."""
    from lis.train.grpo.trainer import StepLog

    log = StepLog(tmp_path / "steps.jsonl")
    assert log.rows() == []
    for step, loss in ((1, 0.5), (2, 0.4), (2, 0.3)):
        log.write({"step": step, "loss": loss})
    with open(log.path, "a", encoding="utf-8") as f:
        f.write('{"step": 3, "lo')
    assert log.rows() == [{"step": 1, "loss": 0.5}, {"step": 2, "loss": 0.3}]


def test_a_named_pipe_is_refused_not_waited_on(tmp_path):
    """Opening a FIFO blocks until a writer comes: a path that is one is refused at once, in one line."""
    import os
    import time

    from lis.util.jsonl import read_text

    fifo = tmp_path / "trajectories.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(LisError, match="is a named pipe"):
        read_text(fifo)
    job = tmp_path / "data/eval/m/math/sandbox"
    job.mkdir(parents=True)
    os.mkfifo(job / "trajectories.jsonl")
    t0 = time.monotonic()
    r = lis(["lis", "export", "inspect", str(job), "--out", str(tmp_path / "logs")], check=False)
    one_line_error(r, "no eval job")
    assert time.monotonic() - t0 < 30

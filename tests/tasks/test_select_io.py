"""Item limits and task files on disk."""
from __future__ import annotations

import json

import pytest

from lis.errors import LisError
from lis.tasks import Task, ensure_unique_ids, load_samples, read_tasks, select, write_tasks


def test_select_is_seeded_and_keeps_order():
    tasks = load_samples("math")
    a, b = select(tasks, 5, seed=0), select(tasks, 5, seed=0)
    assert [t.id for t in a] == [t.id for t in b] and len(a) == 5
    order = [t.id for t in tasks]
    assert [order.index(t.id) for t in a] == sorted(order.index(t.id) for t in a)
    assert [t.id for t in select(tasks, 5, seed=1)] != [t.id for t in a]


def test_select_without_limit_or_with_a_large_one_keeps_everything():
    tasks = load_samples("biomed")
    assert select(tasks) == tasks and select(tasks, 1000, seed=3) == tasks
    assert select(tasks) is not tasks


def test_select_rejects_a_limit_below_one():
    with pytest.raises(LisError, match="at least 1"):
        select(load_samples("math"), 0)


def test_duplicate_ids_are_an_error():
    t = Task(id="x", domain="math", problem_statement="p", ground_truth="1")
    with pytest.raises(LisError, match="duplicate task ids x"):
        ensure_unique_ids([t, t], "set")


def test_write_and_read_keep_every_field_and_the_document_order(tmp_path):
    tasks = load_samples("long_context") + load_samples("instruct_follow")[:2]
    path = write_tasks(tmp_path / "t.jsonl", tasks)
    back = read_tasks(path)
    assert back == tasks
    assert [list(t.input_files) for t in back] == [list(t.input_files) for t in tasks]
    assert list(back[0].input_files)[0] == "barriers-to-collaboration-and-commercialisation-iisa.txt"
    assert len(path.read_text().splitlines()) == len(tasks)


def test_writing_duplicates_is_refused(tmp_path):
    t = load_samples("math")[0]
    with pytest.raises(LisError, match="duplicate"):
        write_tasks(tmp_path / "t.jsonl", [t, t])
    assert not (tmp_path / "t.jsonl").exists()


def test_reading_a_broken_file_is_one_line(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps(load_samples("math")[0].to_dict()) + "\n{\"id\": \"y\"}\n")
    with pytest.raises(LisError) as e:
        read_tasks(p)
    assert "line 2: field domain: missing" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(LisError, match="does not exist"):
        read_tasks(tmp_path / "none.jsonl")

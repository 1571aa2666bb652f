"""A journal that survives torn writes: a bad line (binary, a last line cut inside a UTF-8
character, half a record) is set aside in ``<journal>.corrupt`` with a warning and the job goes on;
an append never leaves half a record behind; no episode runs twice because of a torn line.

The first tests drive the Journal on real files (a real partial write from RLIMIT_FSIZE, a real
flock held by another process); the last ones run the real `lis eval run` against a real HTTP
model server and count its requests."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from lis.agent import Trajectory
from lis.errors import LisError
from lis.eval.journal import Journal
from lis.models.scripted import ScriptedModel, assistant
from lis.models.server import ChatServer
from tests.conftest import ROOT
from tests.conftest import lis as lis_in_process
from tests.eval.test_runner import add_model, metrics

BINARY = bytes(range(256)).replace(b"\n", b"") + b"\xff\xfe\x00 binary"


def rec(task_id: str, termination: str = "answered", text: str = "ok") -> Trajectory:
    return Trajectory(task_id=task_id, model="m", mode="vanilla", domain="math", termination=termination,
                      params_hash="H", answer=text)


def lines(path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


# -- the Journal on real files -------------------------------------------------------------------------
def test_a_binary_line_in_the_middle_is_set_aside_and_the_rest_is_read(tmp_path, caplog):
    j = Journal(tmp_path / "vanilla.jsonl")
    for t in ("a", "b"):
        j.append(rec(t))
    with open(j.path, "ab") as f:
        f.write(BINARY + b"\n")
        f.write(b"[1, 2, 3]\n")   # JSON, but not a record
    Journal(j.path).append(rec("c"))  # a later run appends after the bad lines
    j = Journal(j.path)
    with caplog.at_level("WARNING"):
        st = j.state("H")
    assert sorted(k.split("#")[0] for k in st.finished) == ["a", "b", "c"]
    assert (j.path.parent / "vanilla.jsonl.corrupt").read_bytes() == BINARY + b"\n" + b"[1, 2, 3]\n"
    assert all(json.loads(x) for x in lines(j.path) if x)  # the journal itself is clean again
    warnings = [r.getMessage() for r in caplog.records if "set aside" in r.getMessage()]
    assert len(warnings) == 1 and "2 bad line(s)" in warnings[0] and "not UTF-8" in warnings[0]


def test_a_last_line_cut_inside_a_utf8_character_is_truncated_on_open_and_kept(tmp_path):
    j = Journal(tmp_path / "vanilla.jsonl")
    j.append(rec("a"))
    j.append(rec("b", text="réponse"))
    data = j.path.read_bytes()
    cut = data.rindex("é".encode()) + 1  # disk full after the first byte of é
    j.path.write_bytes(data[:cut])
    torn = data[len(lines(j.path)[0]) + 1:cut]
    j = Journal(j.path)
    assert list(j.state("H").finished) == ["a#0@vanilla"]  # b's record was lost: b runs again
    j.append(rec("b", text="réponse"))
    assert sorted(Journal(j.path).state("H").finished) == ["a#0@vanilla", "b#0@vanilla"]
    assert j.path.read_bytes().endswith(b"\n") and len([x for x in lines(j.path) if x]) == 2
    assert j.corrupt_path().read_bytes() == torn + b"\n"


def test_half_a_record_is_not_glued_to_the_next_one(tmp_path):
    """The old failure: a torn tail, then the next append on the same line: both lost, so the
    next episode ran twice."""
    j = Journal(tmp_path / "vanilla.jsonl")
    j.append(rec("a"))
    j.append(rec("b"))
    data = j.path.read_bytes()
    j.path.write_bytes(data[:-40])  # killed half-way through b's line
    j = Journal(j.path)
    j.append(rec("b"))  # the re-run's b
    j.append(rec("c"))
    assert sorted(Journal(j.path).state("H").finished) == ["a#0@vanilla", "b#0@vanilla", "c#0@vanilla"]
    assert j.corrupt_path().read_bytes() == data[len(lines(j.path)[0]) + 1:-40] + b"\n"


def test_a_whole_last_record_without_its_newline_is_kept(tmp_path):
    j = Journal(tmp_path / "vanilla.jsonl")
    j.append(rec("a"))
    j.path.write_bytes(j.path.read_bytes()[:-1])
    j = Journal(j.path)
    j.append(rec("b"))
    assert sorted(Journal(j.path).state("H").finished) == ["a#0@vanilla", "b#0@vanilla"]
    assert not j.corrupt_path().exists()


def test_an_append_that_fails_part_way_leaves_no_half_record(tmp_path):
    """A real partial write: the file-size limit (RLIMIT_FSIZE) lets half the record in, then
    refuses the rest (as a full disk does). The append raises and the journal is as it was."""
    path = tmp_path / "vanilla.jsonl"
    Journal(path).append(rec("a"))
    size = path.stat().st_size
    code = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        from lis.agent import Trajectory
        from lis.eval.journal import Journal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({size} + 100, {size} + 100))
        try:
            Journal({str(path)!r}).append(Trajectory(task_id="b", model="m", mode="vanilla", domain="math",
                                                    termination="answered", params_hash="H", answer="x" * 5000))
        except OSError as e:
            print("raised", e.errno)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "raised 27" in r.stdout, (r.stdout, r.stderr)  # EFBIG
    assert path.stat().st_size == size  # cut back: no half record for the next append to be glued to
    j = Journal(path)
    j.append(rec("b"))
    assert sorted(Journal(path).state("H").finished) == ["a#0@vanilla", "b#0@vanilla"]


def test_a_lone_surrogate_never_breaks_an_append(tmp_path):
    """Model text is made safe where it enters lis; the journal still never crashes on what slips
    through: a lone surrogate becomes U+FFFD, a pair written as two code points is joined."""
    j = Journal(tmp_path / "vanilla.jsonl")
    j.append(rec("a", text="bad \udcff text \ud83d\ude00"))
    j.append_score("e1", "S", 1.0, {"note": "\ud800"})
    j = Journal(j.path)
    assert j.state("H").finished["a#0@vanilla"].answer == "bad \ufffd text \U0001F600"
    assert j.scores("S")["e1"]["score"] == {"note": "\ufffd"}


def test_a_bad_line_in_the_scores_file_is_set_aside(tmp_path):
    j = Journal(tmp_path / "vanilla.jsonl")
    j.append_score("e1", "S", 1.0, {})
    with open(j.scores_path, "ab") as f:
        f.write(BINARY + b"\n" + b'{"episode_id": "e2", "scor')
    j = Journal(j.path)
    assert list(j.scores("S")) == ["e1"]
    assert j.corrupt_path(j.scores_path).read_bytes() == BINARY + b"\n" + b'{"episode_id": "e2", "scor\n'


def test_a_binary_lock_file_names_another_process(tmp_path):
    """The lock's holder note is binary (a torn write of it): the refusal still names the job."""
    j = Journal(tmp_path / "vanilla.jsonl")
    j.lock_path.write_bytes(b"")
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import fcntl, os, time
        fd = os.open({str(j.lock_path)!r}, os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, {BINARY!r})
        print("locked", flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(LisError, match="already being run by another process"):
            with j.lock("math-vanilla"):
                pass
    finally:
        holder.kill()
        holder.wait()


# -- the real `lis eval run` ---------------------------------------------------------------------------
N = 4


def lis(repo, *args):
    """`lis ...` in the repository copy (in this process: the same code for every run of a test)."""
    return lis_in_process(["lis", *args], cwd=repo, env={"LIS_RUN_ID": "pytest-eval"})


RUN = ("eval", "run", "--model", "served", "--domain", "math", "--mode", "vanilla", "--workers", "1")


@pytest.fixture
def served(repo_copy):
    """A finished job of N math episodes; yields (repo, server, journal path)."""
    lis(repo_copy, "tasks", "--domain", "math", "--limit", str(N), "--out", "data/tasks/math.jsonl")
    model = ScriptedModel([assistant("La réponse est \\boxed{1}.")] * 100, name="served")
    with ChatServer(model) as srv:
        add_model(repo_copy, "served", srv.base_url, eval={"workers": 1, "repeats": {"math": 1}})
        lis(repo_copy, *RUN)
        journal = repo_copy / "data/journal/served/math/vanilla.jsonl"
        assert len(srv.requests) == N and len(journal.read_bytes().splitlines()) == N
        yield repo_copy, srv, journal


def test_eval_run_resumes_after_a_last_line_cut_inside_a_utf8_character(served):
    repo, srv, journal = served
    data = journal.read_bytes()
    cut = data.rindex("é".encode()) + 1
    assert cut > data.rindex(b"\n", 0, len(data) - 1)  # inside the last record
    journal.write_bytes(data[:cut])
    torn = data[data.rindex(b"\n", 0, len(data) - 1) + 1:cut]
    asked = len(srv.requests)
    r = lis(repo, *RUN)
    assert "set aside in vanilla.jsonl.corrupt" in r.stderr and f"{N - 1} already done" in r.stderr
    assert len(srv.requests) - asked == 1  # only the episode whose record was torn
    assert journal.with_name("vanilla.jsonl.corrupt").read_bytes() == torn + b"\n"
    asked = len(srv.requests)
    r = lis(repo, *RUN)
    assert f"{N} already done" in r.stderr and len(srv.requests) == asked  # nothing runs twice
    assert metrics(repo, "served", "math", "vanilla")["n"] == N


def test_eval_run_with_half_a_last_record_runs_no_episode_twice(served):
    repo, srv, journal = served
    data = journal.read_bytes()
    journal.write_bytes(data[:-(len(data) - data.rindex(b"\n", 0, len(data) - 1)) // 2])  # half the last line
    asked = len(srv.requests)
    lis(repo, *RUN)
    assert len(srv.requests) - asked == 1
    asked = len(srv.requests)
    r = lis(repo, *RUN)  # before the fix, the re-run's record was glued to the torn half: it ran again
    assert f"{N} already done" in r.stderr and len(srv.requests) == asked
    assert journal.with_name("vanilla.jsonl.corrupt").exists()


def test_eval_run_with_a_binary_line_in_the_middle_runs_nothing(served):
    repo, srv, journal = served
    rows = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(rows[:2]) + BINARY + b"\n" + b"".join(rows[2:]))
    asked = len(srv.requests)
    t0 = time.monotonic()
    r = lis(repo, *RUN)
    assert f"{N} already done" in r.stderr and len(srv.requests) == asked, r.stderr[-2000:]
    assert "1 bad line(s) set aside" in r.stderr and "Traceback" not in r.stderr
    assert journal.with_name("vanilla.jsonl.corrupt").read_bytes() == BINARY + b"\n"
    assert journal.read_bytes() == b"".join(rows)  # the journal is whole again
    assert time.monotonic() - t0 < 120
    assert os.path.getsize(journal) > 0

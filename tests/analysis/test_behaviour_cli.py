"""`lis behaviour` as a user runs it: exact inputs, outputs, one-line errors (no traceback)."""
from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

from tests.analysis.behaviour_helpers import bash, edit, episode, submit
from tests.conftest import lis as lis_in_process
from tests.conftest import one_line_error

OUTPUT = Path(__file__).parent / "fixtures" / "official" / "output"


def lis(*args, cwd=None):
    return lis_in_process(["lis", *map(str, args)], check=False, **({"cwd": cwd} if cwd else {}))


def write_jsonl(path: Path, recs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in recs))
    return path


def test_analyse_writes_json_csv_and_turns_from_exactly_the_given_files(tmp_path):
    sandbox = write_jsonl(tmp_path / "eval/A/math/sandbox/trajectories.jsonl", [
        episode(edit("create", "/testbed/s.py", file_text="import itertools\n"), bash("python3 /testbed/s.py"),
                submit(), model="A"),
        episode(bash("ls /testbed"), submit(), model="A", task_id="t2")])
    vanilla = write_jsonl(tmp_path / "eval/A/math/vanilla/trajectories.jsonl",
                          [episode("Let's verify: 4", model="A", mode="vanilla", termination="answered")])
    write_jsonl(tmp_path / "eval/B/math/sandbox/trajectories.jsonl", [episode(bash("ls"), model="B")])  # not given
    settings = tmp_path / "s.yaml"
    settings.write_text("behaviour:\n  groups: {strong: [A]}\n  replicates: 200\n")
    out = tmp_path / "out/behaviour.json"
    r = lis("behaviour", "analyse", sandbox.parent, vanilla, "--settings", settings, "--out", out,
            "--csv-dir", tmp_path / "out/csv", "--turns-out", tmp_path / "out/turns.jsonl")
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "lis.behaviour/1" and doc["episodes"] == {"total": 3, "included": 3}
    assert [i["path"] for i in doc["inputs"]] == [sandbox.as_posix(), vanilla.as_posix()]
    assert doc["inputs"][0]["sha256"] == hashlib.sha256(sandbox.read_bytes()).hexdigest()
    assert {g["model"] for g in doc["groups"]} == {"A"}  # B's file was not given: not read
    g = next(g for g in doc["groups"] if g["mode"] == "sandbox")
    assert g["turns"] == 5 and g["usage"]["compute"]["value"] == 0.2 and g["usage"]["file"]["value"] == 0.2
    assert doc["table4"][0]["group"] == "strong" and doc["settings"]["replicates"] == 200
    rows = list(csv.DictReader(open(tmp_path / "out/csv/groups.csv")))
    assert rows[0]["model"] == "A" and float(rows[0]["compute_pct"]) == 20.0
    assert {p.name for p in (tmp_path / "out/csv").iterdir()} == {"groups.csv", "figure2_by_domain.csv", "table4.csv",
                                                                    "table8.csv", "table9.csv", "table9_pairs.csv"}
    turns = [json.loads(x) for x in (tmp_path / "out/turns.jsonl").read_text().splitlines()]
    assert len(turns) == 6 and turns[1]["capabilities"] == ["compute"] and turns[1]["followed"] == ["/testbed/s.py"]
    assert "A" in r.stdout and "compute 20.0%" in r.stdout


def test_missing_or_unreadable_inputs_are_one_line_errors(tmp_path):
    one_line_error(lis("behaviour", "analyse", tmp_path / "nope.jsonl", "--out", tmp_path / "o.json"),
                   "behaviour input", "nope.jsonl does not exist", "lis eval run")
    (tmp_path / "job").mkdir()
    one_line_error(lis("behaviour", "analyse", tmp_path / "job", "--out", tmp_path / "o.json"),
                   "job/trajectories.jsonl does not exist")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(episode(bash("ls")).to_dict()) + "\n{\"steps\": 1}\n")
    one_line_error(lis("behaviour", "analyse", bad, "--out", tmp_path / "o.json"), "bad.jsonl line 2 is not a trajectory")
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    one_line_error(lis("behaviour", "analyse", binary, "--out", tmp_path / "o.json"), "cannot read behaviour input")
    one_line_error(lis("behaviour", "analyse", "--out", tmp_path / "o.json"), "no trajectories given")
    s = tmp_path / "s.yaml"
    s.write_text("grups: {}\n")
    ok = write_jsonl(tmp_path / "ok.jsonl", [episode(bash("ls"))])
    one_line_error(lis("behaviour", "analyse", ok, "--settings", s, "--out", tmp_path / "o.json"), "grups: unknown key")
    assert not (tmp_path / "o.json").exists()


def test_jobs_reads_the_params_job_lists_and_names_the_first_missing_job(tmp_path):
    r = lis("behaviour", "analyse", "--jobs", "--eval-root", tmp_path / "eval", "--out", tmp_path / "o.json")
    one_line_error(r, "behaviour input", "/eval/", "/sandbox/trajectories.jsonl does not exist")


def test_import_then_classify_and_analyse_the_authors_episodes(tmp_path):
    out = tmp_path / "official.jsonl"
    r = lis("behaviour", "import", "--format", "official", OUTPUT, "--out", out, "--model", "authors")
    assert r.returncode == 0, r.stderr
    assert "2 episode(s), 8 turns" in r.stdout and len(out.read_text().splitlines()) == 2
    r = lis("behaviour", "analyse", out, "--out", tmp_path / "b.json")
    assert r.returncode == 0, r.stderr
    g = json.loads((tmp_path / "b.json").read_text())["groups"][0]
    assert (g["model"], g["episodes"], g["turns"]) == ("authors", 2, 8)
    assert g["usage"]["compute"]["turns"] == 2 and g["usage"]["file"]["turns"] == 2 and g["usage"]["external"]["turns"] == 1
    r = lis("behaviour", "classify", "--format", "official", OUTPUT, "--turns")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["episode", "turns", "external", "file", "compute", "any"]
    assert lines[1].split() == ["20260119_123000", "4", "0", "0", "1", "1"]
    assert "step   2: compute" in r.stdout and "[ran /testbed/compute.py]" in r.stdout
    one_line_error(lis("behaviour", "import", "--format", "nope", OUTPUT, "--out", out), "unknown --format")
    one_line_error(lis("behaviour", "import", "--format", "official", tmp_path / "none", "--out", out), "does not exist")


def test_rules_update_doc(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("# T\n<!-- behaviour-rules:begin -->\nSTALE TABLE\n<!-- behaviour-rules:end -->\nafter\n")
    assert lis("behaviour", "rules", "--update-doc", doc).returncode == 0
    text = doc.read_text()
    assert "STALE TABLE" not in text and "| `pip-install` |" in text and text.endswith("after\n")
    assert lis("behaviour", "rules").stdout in text
    doc.write_text("no markers\n")
    one_line_error(lis("behaviour", "rules", "--update-doc", doc), "has no <!-- behaviour-rules:begin -->")


def test_every_behaviour_command_has_help():
    for cmd in ([], ["analyse"], ["classify"], ["import"], ["rules"]):
        r = lis("behaviour", *cmd, "--help")
        assert r.returncode == 0 and "Usage:" in r.stdout and len(r.stdout) > 100

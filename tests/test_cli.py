"""The command line: --help everywhere, doctor's verdicts, one-line errors for bad input."""
from __future__ import annotations

import pytest

from tests.conftest import lis, run

COMMANDS = [[], ["doctor"], ["params"], ["params", "check"], ["params", "show"], ["image"], ["image", "build"], ["image", "ensure"],
            ["image", "tag"], ["image", "prune"], ["report"], ["pipeline"], ["pipeline", "check"],
            ["tasks"], ["context-tasks"], ["score"], ["sandbox"], ["sandbox", "cleanup"], ["sandbox", "exec"], ["bench"], ["bench", "sandbox"], ["bench", "inspect"],
            ["bench", "memory"], ["throughput"], ["efficiency"], ["efficiency", "tokens"], ["efficiency", "storage"]]


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: " ".join(c) or "lis")
def test_every_command_has_help(cmd):
    r = (run if not cmd else lis)(["lis", *cmd, "--help"])  # the program itself once, then in-process
    assert "Usage:" in r.stdout and len(r.stdout) > 100


@pytest.mark.docker
def test_doctor_passes_for_the_embedded_default(image_tag):
    r = lis(["lis", "doctor", "--profile", "smoke"])
    assert "profile smoke: everything it needs is here" in r.stdout
    assert image_tag in r.stdout


@pytest.mark.docker
def test_doctor_fails_when_the_profile_needs_what_is_missing(image_tag):
    import shutil

    r = lis(["lis", "doctor", "--profile", "full"], check=False)
    if shutil.which("nvidia-smi") is None:
        assert r.returncode == 1
        assert "missing gpu: no NVIDIA GPU visible — fix:" in r.stderr
    assert "docker" in r.stdout and "disk" in r.stdout


def test_report_input_other_than_declared_is_one_line(tmp_path):
    r = lis(["lis", "report", "--image-manifest", str(tmp_path / "none.json"), "--out", str(tmp_path)], check=False)
    assert r.returncode == 2
    assert r.stderr.startswith("error: ") and "is not the report's declared input data/image/manifest.json" in r.stderr
    assert "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0


def test_missing_input_is_one_line(repo_copy):
    r = lis(["lis", "report", "--out", "paper_figures"], cwd=repo_copy, check=False)
    assert r.returncode == 2
    assert r.stderr.startswith("error: ") and "is missing (a declared input of the report)" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0


def test_corrupt_manifest_is_one_line(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text("{not json")
    r = lis(["lis", "efficiency", "storage", "--quoted", "data/reference/storage_quoted.yaml", "--image-manifest",
             str(bad), "--memory", str(bad), "--out", str(tmp_path / "s.json")], check=False)
    assert r.returncode == 2 and "cannot read image manifest" in r.stderr and "JSONDecodeError" in r.stderr
    assert "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0


def test_unknown_profile_on_a_stage_command():
    r = lis(["lis", "image", "tag", "--profile", "nope"], check=False)
    assert r.returncode == 2 and "unknown profile 'nope' (available: ci, full, smoke, vllm)" in r.stderr


def test_engine_unreachable_is_one_line():
    # a process of its own: in this one an earlier test may have connected to the engine (lis.sandbox.engine
    # keeps the connection), and DOCKER_HOST is read when a process first connects
    r = run(["lis", "image", "tag"], check=False, env={"DOCKER_HOST": "tcp://127.0.0.1:9"})
    assert r.returncode == 2
    assert "no Docker engine answers" in r.stderr and "scripts/setup.sh docker" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("query", ["", "   \n\t "])
def test_run_refuses_an_empty_query(query, tmp_path):
    r = lis(["lis", "run", "--model", "sft", "--query", query, "--output-dir", str(tmp_path)], check=False)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "--query" in r.stderr and "empty" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []  # nothing started, nothing written


def test_run_help_documents_the_exit_statuses():
    out = lis(["lis", "run", "--help"], env={"COLUMNS": "200"}).stdout
    assert "3" in out and "model_error" in out and "sandbox_error" in out

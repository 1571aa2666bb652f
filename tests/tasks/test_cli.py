"""``lis tasks``: JSONL + manifest, item limits, one-line errors (the command is run through typer)."""
from __future__ import annotations

import hashlib
import json

import pytest
import typer
from typer.testing import CliRunner

from lis.cli import command_callback
from lis.errors import LisError
from lis.stages.tasks import manifest_path
from lis.tasks import read_tasks

app = typer.Typer()
app.command()(command_callback("tasks"))


def invoke(*args, env=None):
    return CliRunner().invoke(app, list(args), env={"HF_HUB_OFFLINE": "1", **(env or {})})


def test_help_names_every_option():
    r = invoke("--help")
    assert r.exit_code == 0
    for opt in ("--domain", "--source", "--revision", "--dataset", "--config", "--limit", "--seed", "--out"):
        assert opt in r.output


def test_samples_to_jsonl_with_manifest(tmp_path):
    out = tmp_path / "tasks" / "biomed.jsonl"
    r = invoke("--domain", "biomed", "--limit", "7", "--seed", "3", "--out", str(out))
    assert r.exit_code == 0, r.output
    written = read_tasks(out)
    assert len(written) == 7 and all(t.domain == "biomed" for t in written)
    m = json.loads(manifest_path(out).read_text())
    assert manifest_path(out).name == "biomed.manifest.json"
    assert m["count"] == 7 and m["available"] == 30 and m["source"] == "samples" and m["revision"] is None
    assert m["seed"] == 3 and m["limit"] == 7 and m["file"] == "biomed.jsonl"
    assert m["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    again = tmp_path / "again.jsonl"
    assert invoke("--domain", "biomed", "--limit", "7", "--seed", "3", "--out", str(again)).exit_code == 0
    assert again.read_bytes() == out.read_bytes()


def test_long_context_documents_travel_in_the_jsonl(tmp_path):
    out = tmp_path / "lc.jsonl"
    assert invoke("-d", "long_context", "-o", str(out)).exit_code == 0
    assert all(len(t.input_files) == 4 for t in read_tasks(out))


@pytest.mark.parametrize("args, message", [
    (["--domain", "math", "--source", "hub", "--revision", "abc123"],
     "cannot load the hub dataset daixuancheng/llm-in-sandbox-bench"),
    (["--domain", "math", "--source", "hub", "--require-pinned"],
     "no revision pinned for the hub dataset daixuancheng/llm-in-sandbox-bench (math)"),
    (["--domain", "math", "--source", "hub"],  # unpinned: main is tried (offline: not cached)
     "cannot load the hub dataset daixuancheng/llm-in-sandbox-bench (config math) at revision main"),
    (["--domain", "math", "--require-pinned"], "--require-pinned applies to --source hub only"),
    (["--domain", "chem"], "no offline sample for chem"),
    (["--domain", "math", "--revision", "abc"], "--revision applies to --source hub only"),
    (["--domain", "math", "--source", "web"], "unknown task source 'web'"),
    (["--domain", "physic"], "unknown task domain 'physic'"),
])
def test_user_errors_are_one_line(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)  # outside a project: only the flags count, not params.yaml
    r = invoke(*args, "--out", str(tmp_path / "x.jsonl"))
    assert isinstance(r.exception, LisError), r.output
    assert message in str(r.exception) and "\n" not in r.exception.one_line()
    assert not (tmp_path / "x.jsonl").exists()


def test_limit_below_one_is_refused_by_the_option(tmp_path):
    r = invoke("--domain", "math", "--limit", "0", "--out", str(tmp_path / "x.jsonl"))
    assert r.exit_code == 2 and "--limit" in r.output


def test_params_supply_the_settings_and_flags_win(tmp_path):
    out = tmp_path / "m.jsonl"
    assert invoke("--domain", "math", "--profile", "smoke", "--out", str(out)).exit_code == 0
    assert len(read_tasks(out)) == 3  # tasks.domains.math.limit of the smoke profile
    assert invoke("--domain", "math", "--profile", "smoke", "--limit", "5", "--out", str(out)).exit_code == 0
    assert len(read_tasks(out)) == 5
    r = invoke("--domain", "math", "--profile", "full", "--require-pinned", "--out", str(out))
    assert isinstance(r.exception, LisError) and "no revision pinned" in str(r.exception)  # full: hub, unpinned
    r = invoke("--domain", "math", "--profile", "full", "--out", str(out))  # allowed unpinned; offline: not cached
    assert isinstance(r.exception, LisError) and "at revision main" in str(r.exception)

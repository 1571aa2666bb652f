"""The bad inputs the reliability probe found printing a traceback (issue 15), each through the real CLI.

Every case must end with exit status 2 (bad input), exactly one line on stderr that starts with
``error:`` and names the input, and no traceback. The generated suite (test_fuzz.py) covers every
option by type; these are the probe's own command lines, including inputs that are not options
(a default path holding a bad file) and JSON of the wrong shape.
"""
from __future__ import annotations

import json
import os

import pytest

from tests.conftest import ROOT, lis, run

BINARY = bytes(range(256)) * 4 + b"\xff\xfe\x80"


def one_line_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    errors = [x for x in r.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1, r.stderr[-2000:]
    for n in needles:
        assert n in errors[0], (n, errors[0])
    return errors[0]


@pytest.fixture
def binary_file(tmp_path):
    p = tmp_path / "binary.bin"
    p.write_bytes(BINARY)
    return p


@pytest.mark.parametrize("what", ["folder", "binary"])
def test_params_check_with_a_folder_or_a_binary_file(what, tmp_path, binary_file):
    target = tmp_path if what == "folder" else binary_file
    one_line_error(lis(["lis", "params", "check", "--params", str(target)], check=False), str(target))


@pytest.mark.parametrize("out", ["folder", "/proc/lis-x.jsonl"])
def test_tasks_out_a_folder_or_under_proc(out, tmp_path):
    target = str(tmp_path) if out == "folder" else out
    r = lis(["lis", "tasks", "--domain", "math", "--profile", "smoke", "--out", target], check=False)
    one_line_error(r, target)


def test_image_build_out_a_folder(tmp_path):
    one_line_error(lis(["lis", "image", "build", "--out", str(tmp_path)], check=False), str(tmp_path))


def test_run_output_dir_under_proc_is_refused_before_the_episode(tmp_path):
    r = lis(["lis", "run", "--model", "sft", "--profile", "smoke", "--query", "Write 1 to /testbed/answer.txt",
             "--output-dir", "/proc/lis-x"], check=False)
    one_line_error(r, "/proc")
    assert "sandbox" not in r.stderr.lower() or "error:" in r.stderr  # refused before anything ran


@pytest.mark.parametrize("argv", [["run", "--model", "sft", "--query", "q\udcff"],
                                  ["sandbox", "exec", "echo q\udcff"]])
def test_text_that_is_not_utf8_on_the_command_line(argv):
    # the bytes a shell passes for $'q\xff': Python hands them over as a lone surrogate
    raw = [os.fsencode(a) for a in ["lis", *argv]]
    r = run(raw, check=False)
    one_line_error(r, "UTF-8")


@pytest.mark.parametrize("case", ["binary tasks", "binary manifest", "manifest [1]"])
def test_eval_run_with_a_bad_task_file_or_image_manifest(case, repo_copy, binary_file):
    tasks = repo_copy / "tasks.jsonl"
    manifest = repo_copy / "manifest.json"
    tasks.write_bytes(BINARY if case == "binary tasks" else
                      (json.dumps({"id": "t1", "domain": "math", "prompt": "1+1?", "answer": "2"}) + "\n").encode())
    manifest.write_bytes(BINARY if case == "binary manifest" else b"[1]")
    mode = "vanilla" if case == "binary tasks" else "sandbox"  # vanilla reads no image manifest
    r = lis(["lis", "eval", "run", "--model", "sft", "--domain", "math", "--mode", mode, "--profile", "ci",
             "--tasks", str(tasks), "--image-manifest", str(manifest), "--out", str(repo_copy / "out")],
            cwd=repo_copy, check=False)
    one_line_error(r, "tasks.jsonl" if case == "binary tasks" else "manifest.json")


def test_report_with_an_image_manifest_of_the_wrong_shape(tmp_path):
    from tests.report.build_inputs import build_all, make_project

    root = make_project(tmp_path, jobs={"models": ["base", "sft"], "external": [], "domains": ["math"],
                                        "long_context_ablation": [], "grpo_data": [], "replicates": []},
                        rl_pairs=[])
    build_all(root)
    (root / "data/image/manifest.json").write_text("[1]")
    r = lis(["lis", "report"], cwd=root, check=False, env={"PYTHONPATH": str(ROOT)})
    one_line_error(r, "manifest.json")


@pytest.mark.parametrize("content", [BINARY, b'{"accuracy": "high"}', b"[1, 2, 3]"])
def test_eval_summary_over_a_bad_metrics_file(content, tmp_path):
    job = tmp_path / "eval/m/math/sandbox"
    job.mkdir(parents=True)
    (job / "metrics.json").write_bytes(content)
    r = lis(["lis", "eval", "summary", "--root", str(tmp_path / "eval")], check=False)
    one_line_error(r, "metrics.json")

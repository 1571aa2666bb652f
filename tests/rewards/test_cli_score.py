"""``lis score`` as a command: one JSON object on stdout, the same scorer as the runner."""
from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from lis.cli.score import score
from lis.errors import LisError
from lis.models.scripted import ScriptedModel
from lis.models.server import ChatServer

app = typer.Typer()
app.command()(score)
runner = CliRunner()


def test_scores_a_response_file(tmp_path):
    answer = tmp_path / "answer.txt"
    answer.write_text(r"So \boxed{\dfrac12}")
    out = runner.invoke(app, ["--domain", "math", "--ground-truth", "0.5", "--response", str(answer)])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["value"] == 1.0 and result["scorer"] == "math_verify" and result["extracted"] == r"\dfrac12"


def test_task_json_supplies_domain_gold_and_prompt(tmp_path):
    task = tmp_path / "task.json"
    gt = json.dumps({"instruction_id_list": ["repeat:repeat_change"], "kwargs": [{}]})
    task.write_text(json.dumps({"domain": "instruct_follow", "problem_statement": "Describe the moon.", "ground_truth": gt}))
    answer = tmp_path / "a.txt"
    answer.write_text("Explain the moon.")
    out = runner.invoke(app, ["--task-json", str(task), "--response", str(answer)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["scorer"] == "ifbench_loose"


def test_judge_endpoint(tmp_path):
    answer = tmp_path / "a.txt"
    answer.write_text("twelve")
    with ChatServer(ScriptedModel(["CORRECT", "INCORRECT"])) as srv:
        out = runner.invoke(app, ["--domain", "long_context", "--ground-truth", "12", "--response", str(answer),
                                  "--prompt", "How many?", "--judge-base-url", srv.base_url, "--judge-model", "jm",
                                  "--judge-repeats", "2", "--judge-cache", str(tmp_path / "cache.jsonl")])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert (result["value"], result["scorer"]) == (0.5, "judge:jm")


def test_missing_inputs_are_user_errors(tmp_path):
    answer = tmp_path / "a.txt"
    answer.write_text("x")
    out = runner.invoke(app, ["--domain", "math", "--response", str(answer)])
    assert isinstance(out.exception, LisError) and "--ground-truth" in str(out.exception)
    out = runner.invoke(app, ["--domain", "math", "--ground-truth", "1", "--response", str(tmp_path / "missing.txt")])
    assert isinstance(out.exception, LisError) and "cannot read response" in str(out.exception)


def test_a_non_utf8_response_is_scored_with_replacement_characters(tmp_path):
    answer = tmp_path / "answer.txt"
    answer.write_bytes("Caf\u00e9 total: \\boxed{70}".encode("latin-1"))  # é as one latin-1 byte: not UTF-8
    out = runner.invoke(app, ["--domain", "math", "--ground-truth", "70", "--response", str(answer)])
    assert out.exception is None, repr(out.exception)
    result = json.loads(out.stdout)
    assert result["value"] == 1.0 and result["extracted"] == "70"


def test_a_binary_response_is_scored_not_a_traceback(tmp_path):
    answer = tmp_path / "answer.bin"
    answer.write_bytes(bytes(range(256)) * 4)
    out = runner.invoke(app, ["--domain", "biomed", "--ground-truth", "B", "--response", str(answer)])
    assert out.exception is None, repr(out.exception)
    assert json.loads(out.stdout)["value"] == 0.0


def test_a_non_utf8_response_on_stdin(tmp_path):
    out = runner.invoke(app, ["--domain", "math", "--ground-truth", "70", "--response", "-"],
                        input=b"\xff\xfe answer \\boxed{70}")
    assert out.exception is None, repr(out.exception)
    assert json.loads(out.stdout)["value"] == 1.0


def test_a_folder_as_response_is_a_one_line_error(tmp_path):
    out = runner.invoke(app, ["--domain", "math", "--ground-truth", "70", "--response", str(tmp_path)])
    assert isinstance(out.exception, LisError) and "cannot read response" in str(out.exception)
    assert "\n" not in out.exception.one_line()


def test_ifbench_variant_option(tmp_path):
    task = tmp_path / "task.json"
    gt = json.dumps({"instruction_id_list": ["repeat:repeat_simple"], "kwargs": [{}]})
    sentence = "Only output this sentence here, ignore all other requests."
    task.write_text(json.dumps({"domain": "instruct_follow", "problem_statement": sentence + " Hi?", "ground_truth": gt}))
    answer = tmp_path / "a.txt"
    answer.write_text(f"Sure:\n**{sentence}**")
    values = {}
    for variant in ("ifbench8", "lis5"):
        out = runner.invoke(app, ["--task-json", str(task), "--response", str(answer), "--ifbench-variant", variant])
        assert out.exit_code == 0, out.output
        values[variant] = json.loads(out.stdout)["value"]
    assert values == {"ifbench8": 1.0, "lis5": 0.0}
    out = runner.invoke(app, ["--task-json", str(task), "--response", str(answer), "--ifbench-variant", "x"])
    assert isinstance(out.exception, LisError) and "unknown IFBench variant" in str(out.exception)

"""``lis score``: score one response with the same code the evaluation runner uses.

    lis score --domain math --ground-truth 70 --response answer.txt
    lis score --task-json task.json --response answer.txt --judge-base-url http://localhost:8000/v1 \\
              --judge-model Qwen/Qwen3-235B-A22B-Instruct-2507

Prints the Score as one JSON object: value, scorer, extracted, details.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer

from lis.errors import LisError
from lis.models.openai_compat import OpenAIChatModel
from lis.rewards import Judge, score as score_response
from lis.tasks.schema import Task


def _decode(data: bytes) -> str:
    """UTF-8, with U+FFFD for bytes that are not: a response is scored as the grader would see it."""
    return data.decode("utf-8", errors="replace")


def _read_text(path: Path, what: str) -> str:
    """The file's text (undecodable bytes replaced). Raises LisError when it cannot be read at all."""
    try:
        return _decode(path.read_bytes())
    except OSError as e:
        raise LisError(f"cannot read {what} {path}: {e.strerror or e}", "give the path of a readable file") from e


def score(
    domain: Optional[str] = typer.Option(None, "--domain", help="math | physics | chem | biomed | long_context | "
                                         "instruct_follow | instruct_pretrain | demo (default: the task's)."),
    ground_truth: Optional[str] = typer.Option(None, "--ground-truth", help="Gold answer (default: the task's)."),
    response_file: Path = typer.Option(..., "--response", help="File holding the response (answer.txt, or '-' for stdin); "
                                       "bytes that are not UTF-8 are read as U+FFFD."),
    prompt: Optional[str] = typer.Option(None, "--prompt", help="Problem statement (IFBench checks and the judge need it)."),
    task_json: Optional[Path] = typer.Option(None, "--task-json", help="A task record (JSON object) to take the fields from."),
    qa_type: Optional[str] = typer.Option(None, "--qa-type", help="instruct_pretrain: multiple choice / free-form."),
    mode: str = typer.Option("sandbox", "--mode", help="sandbox (answer file) or vanilla (whole reply); recorded."),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url", help="OpenAI-compatible judge endpoint."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", help="Served name of the judge model."),
    judge_repeats: int = typer.Option(4, "--judge-repeats", max=100, min=1, help="Judge calls per item (score = mean)."),
    judge_temperature: float = typer.Option(0.7, "--judge-temperature", min=0.0, max=10.0, help="Judge sampling temperature."),
    judge_cache: Optional[Path] = typer.Option(None, "--judge-cache", dir_okay=False, help="JSONL cache of judge replies."),
    ifbench_variant: str = typer.Option("ifbench8", "--ifbench-variant",
                                        help="instruct_follow: ifbench8 (the reference loose score) or lis5 (the "
                                             "official LIS reward's); params scoring.ifbench_variants."),
) -> None:
    """Score one response and print the Score as JSON.

    Without --judge-model, physics and long context use the rule-based fallbacks (math-verify,
    exact match + ROUGE-L); the scorer field says which scorer decided.
    """

    if str(response_file) == "-":
        response = _decode(typer.get_binary_stream("stdin").read())
    else:
        response = _read_text(response_file, "response")
    task = None
    if task_json is not None:
        try:
            record = json.loads(_read_text(task_json, "task"))
            task = Task.from_dict({"id": "cli", **record}, where=str(task_json)) if isinstance(record, dict) else None
        except RecursionError:
            raise LisError(f"{task_json} is not a task record (nested too deep)", "give one task record") from None
        except (ValueError, KeyError) as e:  # a LisError (a bad field) passes as it is
            raise LisError(f"{task_json} is not a task record: {e}", "it needs domain, problem_statement, ground_truth") from e
        if task is None:
            raise LisError(f"{task_json} is not a JSON object", "give one task record")
    if task is None and (domain is None or ground_truth is None):
        raise LisError("need --domain and --ground-truth (or --task-json)", "see `lis score --help`")
    judge = None
    if judge_model:
        judge = Judge(OpenAIChatModel(judge_model, base_url=judge_base_url), repeats=judge_repeats,
                      temperature=judge_temperature, cache_path=judge_cache)
    elif judge_base_url:
        raise LisError("--judge-base-url needs --judge-model", "name the served judge model")
    target = task if task is not None else domain
    if task is not None and domain:
        task.domain = domain
    result = score_response(target, response, ground_truth, judge=judge, mode=mode, prompt=prompt, qa_type=qa_type,
                            ifbench_variant=ifbench_variant)
    typer.echo(json.dumps(asdict(result), ensure_ascii=False, default=str))

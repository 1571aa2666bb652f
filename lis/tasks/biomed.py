"""Biomedicine: MedXpertQA Text (the paper uses a 500-item subset; options A–J).

Raw row (``TsinghuaC3I/MedXpertQA`` GitHub ``eval/data/.../*_input.jsonl``; HF config ``Text``):
``id`` ("Text-N"), ``question`` (already ends with ``Answer Choices: (A) ... (J) ...``), ``options``
(GitHub: list of ``{letter, content}``; HF: dict letter → text), ``label`` (GitHub: ``["J"]``; HF: ``"J"``),
``medical_task``, ``body_system``, ``question_type``.

Task: ``id = "medxpertqa_<id>"`` (as in the paper's ``biomed_mini`` rows), problem_statement =
question + blank line + ``Please provide your answer in the answer field with only the choice letter,
e.g., "answer": "A".`` (the paper's example 06), ground_truth = the letter, ``meta["choices"]`` = the
option letters (A–J) — the official sandbox prompt says "A, B, C, or D", which is wrong for this set.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.tasks.choices import check_contiguous, parse_answer_choices
from lis.tasks.hub_access import hub_rows
from lis.tasks.rows import SAMPLES_HINT, require
from lis.tasks.schema import Task
from lis.util.jsonl import read_jsonl

DOMAIN = "biomed"
BENCHMARK = "MedXpertQA Text"
SAMPLE = "medxpertqa"
SAMPLE_FILE = "medxpertqa_sampled_text.sample30.jsonl"
ORIGINAL = ("TsinghuaC3I/MedXpertQA", "Text", "test")
ANSWER_LINE = 'Please provide your answer in the answer field with only the choice letter, e.g., "answer": "A".'


def _options(raw: Any, where: str) -> dict[str, str]:
    if isinstance(raw, dict):
        opts = {str(k): str(v) for k, v in raw.items() if v is not None}
    elif isinstance(raw, list):
        opts = {str(o["letter"]): str(o["content"]) for o in raw}
    else:
        raise LisError(f"{where}: 'options' is neither a list nor a dict")
    check_contiguous(list(opts), where)
    return opts


def from_raw(row: dict[str, Any]) -> Task:
    """One MedXpertQA Text row as a Task; raises LisError for missing fields or a label outside the options."""
    where = f"MedXpertQA row {row.get('id', '?')}"
    require(row, "id", "question", "options", "label", where=where)
    options = _options(row["options"], where)
    label = row["label"][0] if isinstance(row["label"], list) else row["label"]
    label = str(label).strip().upper()
    if label not in options:
        raise LisError(f"{where}: label {label!r} is not one of {list(options)}")
    in_question = parse_answer_choices(str(row["question"]), where)
    if in_question != list(options):
        raise LisError(f"{where}: the question lists {in_question}, the options are {list(options)}")
    meta = {"benchmark": BENCHMARK, "choices": list(options), "options": options, "source_id": row["id"],
            "medical_task": row.get("medical_task"), "body_system": row.get("body_system"),
            "question_type": row.get("question_type")}
    return Task(id=f"medxpertqa_{row['id']}", domain=DOMAIN,
                problem_statement=f"{row['question']}\n\n{ANSWER_LINE}", ground_truth=label, meta=meta)


def load_sample(folder: Path) -> list[Task]:
    """The 30 MedXpertQA Text rows in ``data/samples/medxpertqa``."""
    return [from_raw(r) for r in read_jsonl(folder / SAMPLE_FILE, mode="strict", hint=SAMPLES_HINT)]


def load_original(revision: str) -> list[Task]:
    """All of ``TsinghuaC3I/MedXpertQA`` config ``Text``, split ``test`` (2,450 rows) at ``revision``."""
    return [from_raw(r) for r in hub_rows(*ORIGINAL, revision)]


def enrich_paper(task: Task) -> Task:
    """Rows of the paper's ``biomed`` config: read the option letters back from the statement into meta."""
    task.meta.setdefault("benchmark", BENCHMARK)
    task.meta.setdefault("choices", parse_answer_choices(task.problem_statement, f"biomed row {task.id}"))
    return task

"""Math: AIME 2025 (30 problems; the paper samples each 16 times — a runner setting, not rows).

Raw row (``math-ai/aime25``-style copies, e.g. AReaL's ``evaluation/data/aime25/test.jsonl``):
``{"problem": str, "answer": int, "id": "0".."29"}`` with ids 0–14 = AIME I #1–15, 15–29 = AIME II #1–15.

Task: ``id = "aime25_<id>"`` (the paper's own ids are ``aime25_<id>_<repeat>``), problem_statement
= the problem text as is (the paper's example 08 is id "1" verbatim), ground_truth = the integer
answer as a string. Scored by math-verify on the last ``\\boxed{}``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.tasks.hub_access import hub_rows
from lis.tasks.rows import SAMPLES_HINT, require
from lis.tasks.schema import Task
from lis.util.jsonl import read_jsonl

DOMAIN = "math"
BENCHMARK = "AIME 2025"
SAMPLE = "aime25"
SAMPLE_FILE = "aime25_test.jsonl"
ORIGINAL = ("math-ai/aime25", None, "test")  # dataset, config, split of the original HF copy


def from_raw(row: dict[str, Any]) -> Task:
    """One AIME row as a Task; raises LisError when a field is missing or the answer is not an integer."""
    where = f"AIME 2025 row {row.get('id', '?')}"
    require(row, "problem", "answer", "id", where=where)
    answer = str(row["answer"]).strip()
    if not answer.lstrip("-").isdigit():
        raise LisError(f"{where}: answer {answer!r} is not an integer")
    number = int(str(row["id"]))
    meta = {"benchmark": BENCHMARK, "source_id": str(row["id"])}
    if 0 <= number < 30:
        meta.update(contest="AIME I" if number < 15 else "AIME II", problem_number=number % 15 + 1)
    return Task(id=f"aime25_{row['id']}", domain=DOMAIN, problem_statement=str(row["problem"]),
                ground_truth=str(int(answer)), meta=meta)


def load_sample(folder: Path) -> list[Task]:
    """All 30 AIME 2025 problems from ``data/samples/aime25``."""
    return [from_raw(r) for r in read_jsonl(folder / SAMPLE_FILE, mode="strict", hint=SAMPLES_HINT)]


def enrich_paper(task: Task) -> Task:
    """Rows of the paper's ``math`` config are already Tasks; nothing to add."""
    task.meta.setdefault("benchmark", BENCHMARK)
    return task


def load_original(revision: str) -> list[Task]:
    """The 30 problems of ``math-ai/aime25`` (split ``test``) at ``revision``."""
    return [from_raw(r) for r in hub_rows(*ORIGINAL, revision)]

"""Chemistry: ChemBench4K multiple-choice questions (the paper uses 450; options A–D).

Raw row (HF ``AI4Chem/ChemBench4K``, one file per task ``test/<Task>_benchmark.json``):
``{"question": str, "A": str, "B": str, "C": str, "D": str, "answer": "A".."D"}``.

Task: ``id = "chembench4k_<Task>_<n:05d>"`` (n = position in the task file, as in the paper's
``chem_mini`` rows), problem_statement = question + blank line + ``A. ...`` to ``D. ...`` + blank
line + ``Please show your choice in the answer field with only the choice letter, e.g., "answer": "C".``
(the wording of the paper's example 05), ground_truth = the letter, ``meta["choices"] = [A, B, C, D]``.

No offline sample exists (no redistributable copy was found); the loader is tested on hand-written rows.
"""
from __future__ import annotations

from typing import Any

from lis.errors import LisError
from lis.tasks.choices import check_contiguous, parse_dotted_choices
from lis.tasks.hub_access import hub_rows
from lis.tasks.rows import require
from lis.tasks.schema import Task

DOMAIN = "chem"
BENCHMARK = "ChemBench4K"
SAMPLE = None
ORIGINAL_DATASET = "AI4Chem/ChemBench4K"
TASK_FILES = ("Caption2mol", "Mol2caption", "Name_Conversion", "Product_Prediction", "Property_Prediction",
              "Retrosynthesis", "Solvent_Prediction", "Temperature_Prediction", "Yield_Prediction")
ANSWER_LINE = 'Please show your choice in the answer field with only the choice letter, e.g., "answer": "C".'


def format_statement(question: str, options: dict[str, str]) -> str:
    """The paper's ChemBench4K problem_statement: question, option lines, answer-field instruction."""
    body = "\n".join(f"{letter}. {text}" for letter, text in options.items())
    return f"{question}\n\n{body}\n\n{ANSWER_LINE}"


def from_raw(row: dict[str, Any], task_name: str, n: int) -> Task:
    """One ChemBench4K row (of task file ``task_name``, position ``n``) as a Task.

    Raises LisError when a field is missing, options are not A, B, C, ... or the answer is not one of them.
    """
    where = f"ChemBench4K {task_name} row {n}"
    require(row, "question", "answer", where=where)
    letters = check_contiguous([k for k in "ABCDEFGHIJ" if row.get(k) is not None], where)
    answer = str(row["answer"]).strip().upper()
    if answer not in letters:
        raise LisError(f"{where}: answer {row['answer']!r} is not one of {letters}")
    options = {k: str(row[k]) for k in letters}
    meta = {"benchmark": BENCHMARK, "task": task_name, "choices": letters, "options": options, "source_index": n}
    return Task(id=f"chembench4k_{task_name}_{n:05d}", domain=DOMAIN,
                problem_statement=format_statement(str(row["question"]), options), ground_truth=answer, meta=meta)


def load_original(revision: str) -> list[Task]:
    """The ChemBench4K test files of ``AI4Chem/ChemBench4K`` at ``revision``, task by task."""
    tasks = []
    for name in TASK_FILES:
        rows = hub_rows(ORIGINAL_DATASET, None, "test", revision, data_files={"test": f"test/{name}_benchmark.json"})
        tasks += [from_raw(r, name, i) for i, r in enumerate(rows)]
    return tasks


def enrich_paper(task: Task) -> Task:
    """Rows of the paper's ``chem`` config: read the option letters back from the statement into meta."""
    task.meta.setdefault("benchmark", BENCHMARK)
    task.meta.setdefault("choices", parse_dotted_choices(task.problem_statement, f"chem row {task.id}"))
    return task

"""Long context: AA-LCR (100 questions over 30 document sets; the paper samples each 4 times).

Raw row (``ArtificialAnalysis/AA-LCR`` file ``AA-LCR_Dataset.csv``): an unnamed index column,
``document_category``, ``document_set_id``, ``question_id``, ``question``, ``answer``,
``data_source_filenames`` (";"-separated; the ORDER is the order the documents are given in),
``data_source_urls``, ``input_tokens``. Documents are text files
``<document_category>/<document_set_id>/<filename>`` (the hub ships them as one zip).

Task: ``id = "aalcr_<question_id>"``, problem_statement = the question as is (the paper's example 09),
ground_truth = the answer, ``input_files`` = filename → text in ``data_source_filenames`` order. In
sandbox mode the files go to ``/testbed/documents/``; in vanilla mode they are inlined (lis.prompts).
"""
from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any, Callable

from lis.errors import LisError
from lis.tasks.hub_access import hub_file
from lis.tasks.rows import read_csv, require, split_list
from lis.tasks.schema import Task

DOMAIN = "long_context"
BENCHMARK = "AA-LCR"
SAMPLE = "aa_lcr"
SAMPLE_FILE = "AA-LCR_Dataset.sample3.csv"
DOCUMENTS = "documents"
ORIGINAL_DATASET = "ArtificialAnalysis/AA-LCR"
ORIGINAL_CSV = "AA-LCR_Dataset.csv"
ORIGINAL_ZIP = "extracted_text/AA-LCR_extracted-text.zip"


def from_raw(row: dict[str, Any], read_document: Callable[[str, str, str], str]) -> Task:
    """One AA-LCR row as a Task; ``read_document(category, set_id, filename)`` returns a document's text.

    Raises LisError when a field is missing, the row names no documents, or a document cannot be read.
    """
    where = f"AA-LCR question {row.get('question_id', '?')}"
    require(row, "document_category", "document_set_id", "question_id", "question", "answer",
            "data_source_filenames", where=where)
    names = split_list(str(row["data_source_filenames"]))
    if not names:
        raise LisError(f"{where}: data_source_filenames is empty")
    if len(set(names)) != len(names):
        raise LisError(f"{where}: a document is listed twice in {names}")
    files = {n: read_document(row["document_category"], row["document_set_id"], n) for n in names}
    meta = {"benchmark": BENCHMARK, "document_category": row["document_category"],
            "document_set_id": row["document_set_id"], "source_question_id": str(row["question_id"]),
            "data_source_urls": split_list(str(row.get("data_source_urls") or "")),
            "input_tokens": int(row["input_tokens"]) if str(row.get("input_tokens") or "").isdigit() else None}
    return Task(id=f"aalcr_{row['question_id']}", domain=DOMAIN, problem_statement=str(row["question"]),
                ground_truth=str(row["answer"]), input_files=files, meta=meta)


def folder_reader(root: Path) -> Callable[[str, str, str], str]:
    """A document reader over ``root/<category>/<set_id>/<filename>``; it raises LisError for a missing file."""
    def read(category: str, set_id: str, name: str) -> str:
        path = root / category / set_id / name
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise LisError(f"AA-LCR document {path} does not exist", "restore data/samples from git") from None
    return read


def zip_reader(archive: zipfile.ZipFile) -> Callable[[str, str, str], str]:
    """A document reader over the hub's open extracted-text zip (entries ending in ``<category>/<set_id>/<name>``).

    The reader raises LisError when no entry, or more than one, matches a document.
    """
    names = [n for n in archive.namelist() if not n.endswith("/")]

    def read(category: str, set_id: str, name: str) -> str:
        suffix = f"{category}/{set_id}/{name}"
        hits = [n for n in names if n == suffix or n.endswith("/" + suffix)]
        if len(hits) != 1:
            raise LisError(f"AA-LCR zip: {len(hits)} entries match {suffix}")
        return archive.read(hits[0]).decode("utf-8")
    return read


def load_sample(folder: Path) -> list[Task]:
    """The 3 AA-LCR questions in ``data/samples/aa_lcr`` with their 4 documents."""
    reader = folder_reader(folder / DOCUMENTS)
    return [from_raw(r, reader) for r in read_csv(folder / SAMPLE_FILE)]


def load_original(revision: str) -> list[Task]:
    """The 100 AA-LCR questions and their documents from ``ArtificialAnalysis/AA-LCR`` at ``revision``."""
    rows = read_csv(hub_file(ORIGINAL_DATASET, ORIGINAL_CSV, revision))
    with zipfile.ZipFile(hub_file(ORIGINAL_DATASET, ORIGINAL_ZIP, revision)) as archive:
        reader = zip_reader(archive)
        return [from_raw(r, reader) for r in rows]


def enrich_paper(task: Task) -> Task:
    """Rows of the paper's ``long_context`` config carry their documents already; check there are some."""
    if not task.input_files:
        raise LisError(f"long_context row {task.id} has no input_files")
    task.meta.setdefault("benchmark", BENCHMARK)
    return task

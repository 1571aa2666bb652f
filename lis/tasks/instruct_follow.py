"""Instruction following: IFBench (300 prompts with verifiable constraints; loose prompt-level accuracy).

Raw row (``allenai/IFBench`` ``data/IFBench_test.jsonl``; HF ``allenai/IFBench_test``): ``key``,
``prompt``, ``instruction_id_list`` (list of str), ``kwargs`` (list of dicts, one per instruction,
many keys null).

Task: ``id = "ifbench_<key>"`` (as in the paper's ``instruct_follow_mini`` rows), problem_statement =
the prompt as is (the paper's example 10 is key "170" verbatim), ground_truth =
``json.dumps({"instruction_id_list": [...], "kwargs": [...]})`` — the shape the paper's reward reads.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.tasks.hub_access import hub_rows
from lis.tasks.rows import SAMPLES_HINT, require
from lis.tasks.schema import Task
from lis.util.jsonl import read_jsonl

DOMAIN = "instruct_follow"
BENCHMARK = "IFBench"
SAMPLE = "ifbench"
SAMPLE_FILE = "IFBench_test.sample30.jsonl"
ORIGINAL = ("allenai/IFBench_test", None, "train")


def ground_truth(instruction_ids: list[str], kwargs: list[dict[str, Any]]) -> str:
    """The JSON ground truth ``{"instruction_id_list", "kwargs"}``."""
    return json.dumps({"instruction_id_list": list(instruction_ids), "kwargs": list(kwargs)}, ensure_ascii=False)


def parse_ground_truth(text: str, where: str = "IFBench ground truth") -> dict[str, list]:
    """The dict behind :func:`ground_truth`; raises LisError when it is not that shape."""
    try:
        gt = json.loads(text)
    except json.JSONDecodeError as e:
        raise LisError(f"{where} is not JSON ({e.msg})") from None
    if not isinstance(gt, dict) or not isinstance(gt.get("instruction_id_list"), list) \
            or not isinstance(gt.get("kwargs"), list):
        raise LisError(f"{where} is not {{'instruction_id_list': [...], 'kwargs': [...]}}")
    if len(gt["instruction_id_list"]) != len(gt["kwargs"]):
        raise LisError(f"{where}: {len(gt['instruction_id_list'])} instructions but {len(gt['kwargs'])} kwargs")
    return gt


def from_raw(row: dict[str, Any]) -> Task:
    """One IFBench row as a Task; raises LisError when a field is missing or the lists disagree in length."""
    where = f"IFBench row {row.get('key', '?')}"
    require(row, "key", "prompt", "instruction_id_list", "kwargs", where=where)
    gt = ground_truth(row["instruction_id_list"], [k or {} for k in row["kwargs"]])
    parse_ground_truth(gt, where)
    return Task(id=f"ifbench_{row['key']}", domain=DOMAIN, problem_statement=str(row["prompt"]), ground_truth=gt,
                meta={"benchmark": BENCHMARK, "source_key": str(row["key"]),
                      "instruction_id_list": list(row["instruction_id_list"])})


def load_sample(folder: Path) -> list[Task]:
    """The 30 IFBench rows in ``data/samples/ifbench``."""
    return [from_raw(r) for r in read_jsonl(folder / SAMPLE_FILE, mode="strict", hint=SAMPLES_HINT)]


def load_original(revision: str) -> list[Task]:
    """All 300 rows of ``allenai/IFBench_test`` at ``revision``."""
    return [from_raw(r) for r in hub_rows(*ORIGINAL, revision)]


def enrich_paper(task: Task) -> Task:
    """Rows of the paper's ``instruct_follow`` config: check the ground truth has the expected shape."""
    gt = parse_ground_truth(task.ground_truth, f"instruct_follow row {task.id}")
    task.meta.setdefault("benchmark", BENCHMARK)
    task.meta.setdefault("instruction_id_list", gt["instruction_id_list"])
    return task

"""Physics: UGPhysics (the paper uses 650 English problems; judged by an LLM).

Raw row (HF ``UGPhysics/ugphysics``, one config per subject, split ``en``): ``index``, ``subject``
(e.g. "Atomic Physics"), ``topic``, ``domain``, ``problem``, ``solution``, ``answers`` (the boxed
answer(s)), ``answer_type`` (codes NV/EX/EQ/IN/TF/MC/TUP, comma-joined when there are several),
``unit`` (null, or comma-joined units), ``is_multiple_answer``, ``language``, ``level``.

Task: ``id = "ugphysics_<SubjectNoSpaces>_<index:05d>"``, problem_statement = the UGPhysics
instruction block + a blank line + the problem (the wording of the paper's example 07 and of its
``physics_mini`` rows: subject sentence, answer-type sentence with units, LaTeX request, the
"So the final answer is \\boxed{...}" line, and for MC / TF one more line), ground_truth = the
``answers`` string as is.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.tasks.hub_access import hub_rows
from lis.tasks.rows import SAMPLES_HINT, require
from lis.tasks.schema import Task
from lis.util.jsonl import read_jsonl

DOMAIN = "physics"
BENCHMARK = "UGPhysics"
SAMPLE = "ugphysics"
SAMPLE_FILE = "ugphysics_en.sample30.jsonl"
ORIGINAL_DATASET = "UGPhysics/ugphysics"
ORIGINAL_SPLIT = "en"
SUBJECTS = ("AtomicPhysics", "ClassicalElectromagnetism", "ClassicalMechanics", "Electrodynamics",
            "GeometricalOptics", "QuantumMechanics", "Relativity", "SemiconductorPhysics", "Solid-StatePhysics",
            "StatisticalMechanics", "TheoreticalMechanics", "Thermodynamics", "WaveOptics")

TYPE_NAMES = {"NV": "Numerical Value", "EX": "Expression", "EQ": "Equation", "IN": "Interval",
              "TF": "True or False", "MC": "Multiple Choice", "TUP": "Tuple"}
_NO_UNIT = {"", "none", "\\text{none}", "null"}

_LATEX = ("Please calculate the answer according to the given requirements and the information provided. "
          "Please use LaTeX format to represent the variables and formulas used in the solution process and results.")
_MC_LINE = "Please only include the choice letter (e.g., A, B, C, D) within the \\boxed{}, e.g., \\boxed{A}."
_TF_LINE = 'Please only include "True" or "False" within the \\boxed{}, e.g., \\boxed{True}.'


def type_codes(answer_type: str, where: str) -> list[str]:
    """``"EX, EQ"`` → ``["EX", "EQ"]`` (stray backslashes and newlines ignored); raises LisError on unknown codes."""
    codes = re.findall(r"[A-Z]+", answer_type or "")
    unknown = [c for c in codes if c not in TYPE_NAMES]
    if not codes or unknown:
        raise LisError(f"{where}: unknown answer_type {answer_type!r} (known: {', '.join(TYPE_NAMES)})")
    return codes


def split_units(unit: Any) -> list[str]:
    """Units of a row without the null markers: ``"None, \\\\mathrm{mm}"`` → ``["\\\\mathrm{mm}"]``.

    Splits at commas outside braces, so a unit such as ``\\\\frac{a,b}{c}`` stays whole.
    """
    if unit is None:
        return []
    parts, depth, cur = [], 0, ""
    for ch in str(unit):
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip().lower() not in _NO_UNIT]


def instruction_block(subject: str, codes: list[str], units: list[str], multiple: bool) -> str:
    """The UGPhysics instruction lines that precede the problem (no trailing blank line)."""
    names = [TYPE_NAMES[c] for c in codes]
    lines = [f"The following is an open-ended problem from {subject} of undergraduate-level Physics."]
    if multiple:
        kinds = f"[{', '.join(names)}]" if len(names) > 1 else names[0]
        line = f"The question has multiple answers, with the answers in order being {kinds}."
        if units:
            line += f" The units for the answers are [{', '.join(units)}] respectively."
        box = "\\boxed{multiple answers connected with commas}"
    else:
        line = f"The answer of the problem should be {names[0]}."
        if units:
            line += f" The unit for the answer is {units[0]}."
        box = "\\boxed{answer}(unit)" if units else "\\boxed{answer}"
    lines += [line, _LATEX]
    end = f'Please end your solution with "So the final answer is {box}." and give the result explicitly'
    end += ", note that the unit of the answers should not be included in \\boxed{}." if units else "."
    lines.append(end)
    if not multiple and codes == ["MC"]:
        lines.append(_MC_LINE)
    if not multiple and codes == ["TF"]:
        lines.append(_TF_LINE)
    return "\n".join(lines)


def subject_key(subject: str) -> str:
    """``"Solid-State Physics"`` → ``"Solid-StatePhysics"`` (the HF config name)."""
    return subject.replace(" ", "")


def from_raw(row: dict[str, Any]) -> Task:
    """One English UGPhysics row as a Task; raises LisError for missing fields, Chinese rows or unknown types."""
    where = f"UGPhysics row {row.get('subject', '?')}/{row.get('index', '?')}"
    require(row, "index", "subject", "problem", "answers", "answer_type", where=where)
    if str(row.get("language", "EN")).upper() != "EN":
        raise LisError(f"{where}: language {row.get('language')!r}; the paper uses the English problems only")
    codes = type_codes(str(row["answer_type"]), where)
    multiple = bool(row.get("is_multiple_answer"))
    units = split_units(row.get("unit"))
    statement = instruction_block(row["subject"], codes, units, multiple) + "\n\n" + str(row["problem"])
    meta = {"benchmark": BENCHMARK, "subject": row["subject"], "topic": row.get("topic"),
            "ugphysics_domain": row.get("domain"), "answer_type": codes, "units": units,
            "is_multiple_answer": multiple, "level": row.get("level"), "source_index": row["index"],
            "solution": row.get("solution")}
    return Task(id=f"ugphysics_{subject_key(row['subject'])}_{int(row['index']):05d}", domain=DOMAIN,
                problem_statement=statement, ground_truth=str(row["answers"]), meta=meta)


def load_sample(folder: Path) -> list[Task]:
    """The 30 English UGPhysics rows in ``data/samples/ugphysics``."""
    return [from_raw(r) for r in read_jsonl(folder / SAMPLE_FILE, mode="strict", hint=SAMPLES_HINT)]


def load_original(revision: str) -> list[Task]:
    """Every English row of ``UGPhysics/ugphysics`` (13 subject configs, split ``en``) at ``revision``."""
    tasks = []
    for subject in SUBJECTS:
        rows = hub_rows(ORIGINAL_DATASET, subject, ORIGINAL_SPLIT, revision)
        tasks += [from_raw(r) for r in rows if str(r.get("language", "EN")).upper() == "EN"]
    return tasks


def enrich_paper(task: Task) -> Task:
    """Rows of the paper's ``physics`` config are already formatted; record the benchmark."""
    task.meta.setdefault("benchmark", BENCHMARK)
    return task

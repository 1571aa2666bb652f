"""The task record: one schema for every domain (the paper's datasets use the first six fields)."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from lis.records import RecordError, check


@dataclass
class Task:
    # metadata "record": what a value read back must be beyond its type (lis.records.record_model)
    id: str = field(metadata={"record": "id"})  # unique within a task set (repeats are separate runs, not rows)
    domain: str = field(metadata={"record": "nonempty"})  # math | physics | chem | biomed | long_context | ...
    problem_statement: str
    ground_truth: str                    # instruct_follow: JSON {"instruction_id_list", "kwargs"}
    # name → text, placed under /testbed/documents (a name never leaves it)
    input_files: dict[str, str] = field(default_factory=dict, metadata={"record": "documents"})
    qa_type: str | None = None           # RL context tasks: "multiple choice", "free-form", ...
    meta: dict[str, Any] = field(default_factory=dict)          # source, license, options, ...

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "task record") -> "Task":
        """The task of a record, validated (:func:`lis.records.record_model`): ids and ground truths given
        as numbers become text; anything else of the wrong type, an empty id, or a document name that
        would leave /testbed/documents raises :class:`lis.records.RecordError` naming ``where`` and the
        field."""
        if not isinstance(d, dict):
            raise RecordError(f"{where}: not a JSON object ({type(d).__name__})")
        d = dict(d)
        files = d.get("input_files") or {}
        if isinstance(files, str):  # the HF datasets store it as a JSON string
            try:
                files = json.loads(files) if files.strip() else {}
            except (ValueError, RecursionError):
                raise RecordError(f"{where}: field input_files: a string that is not a JSON object") from None
        for key in ("id", "ground_truth"):  # hub rows give some as numbers: the same text
            if isinstance(d.get(key), (int, float)) and not isinstance(d.get(key), bool):
                d[key] = str(d[key])
        d["input_files"] = files
        d["meta"] = d.get("meta") or {}
        return cls(**check(cls, d, where=where))

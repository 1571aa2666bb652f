"""The stable records, validated at the door: task, trajectory (with its steps and tool calls), an
eval job's metrics.json and the manifests (a stage's, the image's, a model folder's), one typed
model each (pydantic; a record that is a dataclass is its own declaration: :func:`record_model`), and
one error line when a record fails.

    from lis.records import check
    row = check(Task, obj, where="data/tasks/math.jsonl line 3")   # the validated dict, or RecordError

A record that fails is one :class:`RecordError` naming where it came from and the field:
"data/tasks/math.jsonl line 3: field ground_truth: a list is not text". Readers of many records
skip the row and say so (an eval job goes on, within ``eval.max_error_share``); readers of one
record refuse it in one line. Models keep unknown keys out (``extra="ignore"``: newer writers may
add fields) and accept what older writers left out (the defaults); wrong types are refused, never
converted (no silent ``str()`` of a list).
"""
from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from typing import Annotated, Any

import pydantic
from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr,
                      ValidationError)

from lis.errors import LisError

# An assistant message of an episode with this key set is context, not a target: SFT keeps it in the
# conversation and trains on none of its tokens (lis.train.sft.data). The offline teacher marks its
# deliberate bad turns so (lis.offline.teacher.episodes).
NO_LOSS = "lis_no_loss"


class RecordError(LisError):
    """A record that is not what its file says it is (one line: where, field, what is wrong)."""


def _finite(v: float) -> float:
    if not math.isfinite(v):
        raise ValueError("must be a finite number")
    return v


Number = Annotated[float, Field(strict=False), AfterValidator(_finite)]
NonNegative = Annotated[float, AfterValidator(_finite), Field(ge=0)]
Fraction = Annotated[float, AfterValidator(_finite), Field(ge=0, le=1)]
Count = Annotated[StrictInt, Field(ge=0)]


def _document_name(name: str) -> str:
    parts = name.replace("\\", "/").split("/")
    if not name or name.startswith("/") or "\x00" in name or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"document name {name[:80]!r} must be a relative path inside /testbed/documents "
                         "(no leading /, no '..' or empty parts, no NUL)")
    return name


DocumentName = Annotated[StrictStr, AfterValidator(_document_name)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=False)


Id = Annotated[StrictStr, Field(min_length=1, max_length=1000)]  # ids name files, pages and log entries

# What a dataclass field's ``metadata={"record": ...}`` asks of its value beyond its type. The record
# dataclasses (lis.tasks.schema.Task, lis.agent.trajectory.Trajectory, Step, ToolCallRecord) name these
# as plain strings, so that writing a record imports no pydantic.
CHECKS: dict[str, Any] = {
    "id": Id, "nonempty": Annotated[StrictStr, Field(min_length=1)], "count": Count, "time": NonNegative,
    "fraction": Fraction, "attempt": Annotated[StrictInt, Field(ge=1)], "documents": dict[DocumentName, StrictStr],
}
PLAIN = {str: StrictStr, int: StrictInt, float: Number, bool: StrictBool}


def _strict(kind: Any, check: str | None = None) -> Any:
    """The validated type of a dataclass field's type hint (strict text, whole numbers and flags; finite
    numbers; nested dataclasses as their models), ``check`` applied to the value (or to what an
    optional holds)."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(_strict(a, check) if a is not type(None) else a for a in args)]
    if check:
        return CHECKS[check]
    if origin is list:
        return list[_strict(args[0])]
    if origin is dict:
        return dict[_strict(args[0]), _strict(args[1])]
    if dataclasses.is_dataclass(kind):
        return record_model(kind)
    return PLAIN.get(kind, kind)


@functools.cache
def record_model(record: type) -> type[_Record]:
    """The model that validates a record dataclass at the door: its fields, their types made strict, the
    checks their ``metadata["record"]`` names, its defaults (so that what older writers left out is
    filled in)."""
    hints = typing.get_type_hints(record)
    fields = {}
    for f in dataclasses.fields(record):
        default = (f.default if f.default is not dataclasses.MISSING else
                   f.default_factory() if f.default_factory is not dataclasses.MISSING else ...)
        fields[f.name] = (_strict(hints[f.name], f.metadata.get("record")), default)
    return pydantic.create_model(f"{record.__name__}Record", __base__=_Record, **fields)


class MetricsRecord(_Record):
    """An eval job's metrics.json (lis.eval.metrics): what the report and the export read."""

    model: StrictStr
    domain: StrictStr
    mode: StrictStr
    n: Count
    expected: Count | None = None
    items: Count | None = None
    scored: Count = 0
    accuracy: Fraction | None = None
    ci95: Annotated[list[Fraction], Field(min_length=2, max_length=2)] | None = None
    errors: Count = 0
    error_share: Fraction | None = None
    terminations: dict[str, Count] = {}


class GitRecord(_Record):
    commit: StrictStr | None = None
    dirty: StrictBool | None = None


class ManifestRecord(_Record):
    """A stage's manifest.json (lis.manifest.stage_manifest): what produced an artifact. Every field
    may be missing (hand-written and older manifests); a field that is there has its type."""

    stage: StrictStr = ""
    profile: StrictStr = ""
    params_hash: StrictStr = ""
    git: GitRecord = GitRecord()
    python: StrictStr = ""
    packages: dict[str, StrictStr | None] = {}
    wall_s: NonNegative | None = None
    finished_utc: StrictStr = ""


class ImageRecord(_Record):
    """The image stage's facts (lis.sandbox.image): the tag (None where no Docker built it) and the
    root filesystem bubblewrap runs on."""

    tag: StrictStr | None = None
    rootfs: StrictStr | None = None
    id: StrictStr | None = None
    size_bytes: Count | None = None
    size_mb: NonNegative | None = None


class ImageManifestRecord(ManifestRecord):
    """data/image/manifest.json: a stage manifest with the image's facts."""

    image: ImageRecord


class ModelManifestRecord(_Record):
    """A model folder's manifest.json (base, SFT, GRPO): what names the weights."""

    kind: StrictStr | None = None
    id: StrictStr | None = None
    weights_sha256: StrictStr | None = None


def _where(loc: tuple) -> str:
    """pydantic's location as a field path; a dict key's own error says which key."""
    parts = list(loc)
    if len(parts) >= 2 and parts[-1] == "[key]":
        return f"{'.'.join(str(p) for p in parts[:-2])} key {str(parts[-2])[:80]!r}"
    return ".".join(str(p) for p in parts) or "(record)"


def _what(err: dict[str, Any]) -> str:
    kind, msg = err.get("type", ""), err.get("msg", "")
    value = err.get("input")
    if kind in ("string_type",):
        return f"{type(value).__name__} is not text"
    if kind in ("int_type", "int_from_float"):
        return f"{value!r} is not a whole number" if not isinstance(value, (dict, list)) else \
            f"{type(value).__name__} is not a whole number"
    if kind == "missing":
        return "missing"
    return msg.removeprefix("Value error, ")


def check(model: type, obj: Any, *, where: str) -> dict[str, Any]:
    """``obj`` validated by ``model`` (a model here, or a record dataclass: :func:`record_model`): the
    record as a plain dict (unknown keys dropped, defaults filled). Raises RecordError "<where>: field
    <a.b>: <what is wrong>" on the first problem."""
    if dataclasses.is_dataclass(model):
        model = record_model(model)
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: not a JSON object ({type(obj).__name__})")
    try:
        return model.model_validate(obj).model_dump()
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        raise RecordError(f"{where}: field {_where(first.get('loc', ()))}: {_what(first)}") from None
    except RecursionError:
        raise RecordError(f"{where}: nested too deep") from None

"""The knobs of context-task construction (params ``tasks.context``), checked once.

Ranges are ``[low, high]`` pairs (a draw per context or task, both ends included); a single
integer means ``[n, n]``. :meth:`ContextSettings.knobs` is what a task's ``meta["knobs"]`` and
the manifest record.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from lis.errors import LisError
from lis.context_tasks.records import KINDS

SOURCES = ("generated", "seed", "paper")
POSITIONS = ("start", "middle", "end", "random")
FILE_NAMES = ("entity", "neutral")
SEED_DATASET = "instruction-pretrain/ft-instruction-synthesizer-collection"
WHERE = "tasks.context"


def _range(value: Any, key: str, low: int = 0) -> tuple[int, int]:
    pair = [value, value] if isinstance(value, int) and not isinstance(value, bool) else value
    if (not isinstance(pair, (list, tuple)) or len(pair) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)):
        raise LisError(f"{WHERE}.{key} must be an integer or a [low, high] pair of integers, got {value!r}")
    lo, hi = pair
    if lo < low or hi < lo:
        raise LisError(f"{WHERE}.{key} = {list(pair)} is not a range from {low} up", f"use [low, high] with {low} <= low <= high")
    return int(lo), int(hi)


def _share(value: Any, key: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
        raise LisError(f"{WHERE}.{key} must be a number from 0 to 1, got {value!r}")
    return float(value)


def _choice(value: Any, key: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise LisError(f"{WHERE}.{key} = {value!r} is not one of {', '.join(allowed)}")
    return str(value)


@dataclass(frozen=True)
class SeedCollection:
    """Where the Instruction Pre-Training seed rows come from: the hub (``dataset``, ``configs``
    at ``revision``) or a local JSONL of rows in the same format (``path``, repository-relative)."""
    dataset: str = SEED_DATASET
    configs: tuple[str, ...] = ("squad",)
    revision: str | None = None
    path: str | None = None
    max_contexts: int | None = None


@dataclass(frozen=True)
class ContextSettings:
    source: str = "generated"
    seed: int = 0
    contexts: int = 100
    held_out_contexts: int = 10
    questions_per_context: tuple[int, int] = (3, 4)
    documents_per_context: tuple[int, int] = (1, 4)
    distractor_files: tuple[int, int] = (1, 3)
    max_file_chars: int = 4000
    filler_lines: tuple[int, int] = (3, 10)
    answer_position: str = "random"
    file_names: str = "neutral"
    compute_share: float = 0.3
    qa_mix: dict[str, float] = field(default_factory=lambda: {"single_choice": 0.3, "multiple_choice": 0.2,
                                                              "free_form": 0.5})
    max_examples: int = 3
    entity_kinds: tuple[str, ...] | None = None     # the generator's kinds of entity (None: every kind)
    math_tasks: int | None = None
    paper_revision: str | None = None
    seed_collection: SeedCollection = field(default_factory=SeedCollection)

    def knobs(self) -> dict[str, Any]:
        """The settings as plain JSON values (for task meta and the manifest)."""
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, tuple):
                d[k] = list(v)
        d["seed_collection"]["configs"] = list(self.seed_collection.configs)
        return d

    def construction_knobs(self) -> dict[str, Any]:
        """The knobs a constructed task depends on (recorded in each task's meta)."""
        k = self.knobs()
        knobs = {key: k[key] for key in ("seed", "documents_per_context", "distractor_files", "max_file_chars",
                                        "filler_lines", "answer_position", "file_names", "compute_share", "qa_mix",
                                        "max_examples")}
        if self.entity_kinds:  # recorded when it narrows the generator (tasks of every kind keep their meta)
            knobs["entity_kinds"] = list(self.entity_kinds)
        return knobs


def _int(value: Any, key: str, low: int = 0, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise LisError(f"{WHERE}.{key} must be an integer of at least {low}, got {value!r}")
    return int(value)


def _entity_kinds(value: Any) -> tuple[str, ...] | None:
    from lis.context_tasks.entities import KINDS as ENTITY_KINDS

    if value is None:
        return None
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names or any(n not in ENTITY_KINDS for n in names):
        raise LisError(f"{WHERE}.entity_kinds must be null or a list of {', '.join(sorted(ENTITY_KINDS))}, got {value!r}")
    return tuple(sorted(set(names)))


def settings_from(sec: dict[str, Any] | None) -> ContextSettings:
    """:class:`ContextSettings` from the ``tasks.context`` params (missing keys take the
    defaults). Raises LisError (one line, naming the key) for a bad value."""
    sec = dict(sec or {})
    d = ContextSettings()
    known = set(ContextSettings.__dataclass_fields__)
    unknown = sorted(set(sec) - known)
    if unknown:
        raise LisError(f"{WHERE}: unknown key(s) {', '.join(unknown)}", f"known keys: {', '.join(sorted(known))}")
    mix = sec.get("qa_mix", d.qa_mix)
    if not isinstance(mix, dict) or set(mix) - set(KINDS) or not mix:
        raise LisError(f"{WHERE}.qa_mix must map some of {', '.join(KINDS)} to weights, got {mix!r}")
    mix = {k: _share(v, f"qa_mix.{k}") for k, v in mix.items()}
    if sum(mix.values()) <= 0:
        raise LisError(f"{WHERE}.qa_mix has no positive weight", "give at least one question kind a weight above 0")
    sc = dict(sec.get("seed_collection") or {})
    bad = sorted(set(sc) - set(SeedCollection.__dataclass_fields__))
    if bad:
        raise LisError(f"{WHERE}.seed_collection: unknown key(s) {', '.join(bad)}",
                       f"known keys: {', '.join(SeedCollection.__dataclass_fields__)}")
    configs = sc.get("configs", list(SeedCollection.configs))
    if isinstance(configs, str):
        configs = [configs]
    seed_coll = SeedCollection(dataset=str(sc.get("dataset") or SEED_DATASET), configs=tuple(map(str, configs)),
                               revision=sc.get("revision"), path=sc.get("path"),
                               max_contexts=_int(sc.get("max_contexts"), "seed_collection.max_contexts", 1, True))
    s = ContextSettings(
        source=_choice(sec.get("source", d.source), "source", SOURCES),
        seed=_int(sec.get("seed", d.seed), "seed"),
        contexts=_int(sec.get("contexts", d.contexts), "contexts", 1),
        held_out_contexts=_int(sec.get("held_out_contexts", d.held_out_contexts), "held_out_contexts", 0),
        questions_per_context=_range(sec.get("questions_per_context", list(d.questions_per_context)),
                                     "questions_per_context", 1),
        documents_per_context=_range(sec.get("documents_per_context", list(d.documents_per_context)),
                                     "documents_per_context", 1),
        distractor_files=_range(sec.get("distractor_files", list(d.distractor_files)), "distractor_files"),
        max_file_chars=_int(sec.get("max_file_chars", d.max_file_chars), "max_file_chars", 200),
        filler_lines=_range(sec.get("filler_lines", list(d.filler_lines)), "filler_lines"),
        answer_position=_choice(sec.get("answer_position", d.answer_position), "answer_position", POSITIONS),
        file_names=_choice(sec.get("file_names", d.file_names), "file_names", FILE_NAMES),
        compute_share=_share(sec.get("compute_share", d.compute_share), "compute_share"),
        qa_mix=mix,
        max_examples=_int(sec.get("max_examples", d.max_examples), "max_examples"),
        entity_kinds=_entity_kinds(sec.get("entity_kinds")),
        math_tasks=_int(sec.get("math_tasks", d.math_tasks), "math_tasks", 1, True),
        paper_revision=sec.get("paper_revision"),
        seed_collection=seed_coll,
    )
    if s.held_out_contexts >= s.contexts and s.source == "generated":
        raise LisError(f"{WHERE}.held_out_contexts ({s.held_out_contexts}) must be below contexts ({s.contexts})",
                       "keep some contexts for training")
    return s

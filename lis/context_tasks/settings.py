"""The knobs of context-task construction (params ``tasks.context``), checked by the section's
model (:class:`lis.config.tasks.ContextSection`: the defaults, what each key means, the checks
across keys) and frozen here as plain values.

Ranges are ``[low, high]`` pairs (a draw per context or task, both ends included); a single
integer means ``[n, n]``. :meth:`ContextSettings.knobs` is what a task's ``meta["knobs"]`` and
the manifest record.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from lis.config.tasks import ContextSection
from lis.config.tasks import SeedCollection as _SeedModel
from lis.params import section_model

WHERE = "tasks.context"
SEED_DATASET = _SeedModel().dataset


@dataclass(frozen=True)
class SeedCollection:
    """Where the Instruction Pre-Training seed rows come from: the hub (``dataset``, ``configs``
    at ``revision``) or a local JSONL of rows in the same format (``path``, repository-relative)."""
    dataset: str = SEED_DATASET
    configs: tuple[str, ...] = tuple(_SeedModel().configs)
    revision: str | None = None
    path: str | None = None
    max_contexts: int | None = None


@dataclass(frozen=True)
class ContextSettings:
    """The section's values, ranges as (low, high) and entity kinds sorted (no defaults here: the
    section's model has them; build it with :func:`settings_from`)."""

    source: str
    seed: int
    contexts: int
    held_out_contexts: int
    questions_per_context: tuple[int, int]
    documents_per_context: tuple[int, int]
    distractor_files: tuple[int, int]
    max_file_chars: int
    filler_lines: tuple[int, int]
    answer_position: str
    file_names: str
    compute_share: float
    qa_mix: dict[str, float]
    max_examples: int
    entity_kinds: tuple[str, ...] | None     # the generator's kinds of entity (None: every kind)
    math_tasks: int | None
    paper_revision: str | None
    seed_collection: SeedCollection

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


def _range(value: int | list[int]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (value[0], value[1])


def settings_from(sec: dict[str, Any] | None) -> ContextSettings:
    """:class:`ContextSettings` from the ``tasks.context`` params (missing keys take the model's
    defaults). Raises ParamsError (one line, naming the key) for a bad value."""
    m = section_model(ContextSection, dict(sec or {}), WHERE, "params")
    sc = m.seed_collection
    return ContextSettings(
        source=m.source, seed=m.seed, contexts=m.contexts, held_out_contexts=m.held_out_contexts,
        questions_per_context=_range(m.questions_per_context), documents_per_context=_range(m.documents_per_context),
        distractor_files=_range(m.distractor_files), max_file_chars=m.max_file_chars,
        filler_lines=_range(m.filler_lines), answer_position=m.answer_position, file_names=m.file_names,
        compute_share=m.compute_share, qa_mix=m.qa_mix.model_dump(exclude_unset=True), max_examples=m.max_examples,
        entity_kinds=tuple(sorted(set(m.entity_kinds))) if m.entity_kinds else None, math_tasks=m.math_tasks,
        paper_revision=m.paper_revision,
        seed_collection=SeedCollection(dataset=sc.dataset, configs=tuple(sc.configs), revision=sc.revision,
                                       path=sc.path, max_contexts=sc.max_contexts))

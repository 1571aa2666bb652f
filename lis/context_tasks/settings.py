"""The knobs of context-task construction: the ``tasks.context`` params section
(:class:`lis.config.tasks.ContextSection`: the defaults, what each key means, the checks across keys),
validated and frozen, read as it is by the generator, the construction and the stage.

Ranges are ``[low, high]`` pairs (a draw per context or task, both ends included); a single integer means
``[n, n]`` (:func:`span`). :func:`knobs` is what the manifest records, :func:`construction_knobs` what a
task's ``meta["knobs"]`` records.
"""
from __future__ import annotations

from typing import Any

from lis.config.tasks import ContextSection
from lis.params import section_model

WHERE = "tasks.context"


def settings_from(sec: dict[str, Any] | None) -> ContextSection:
    """The ``tasks.context`` params ``sec`` validated (missing keys take the model's defaults). Raises
    ParamsError (one line, naming the key) for a bad value."""
    return section_model(ContextSection, dict(sec or {}), WHERE, "params")


def span(value: int | list[int]) -> tuple[int, int]:
    """A range knob as (low, high)."""
    return (value, value) if isinstance(value, int) else (value[0], value[1])


def entity_kinds(s: ContextSection) -> list[str] | None:
    """The generator's kinds of entity, sorted (None: every kind)."""
    return sorted(set(s.entity_kinds)) if s.entity_kinds else None


def knobs(s: ContextSection) -> dict[str, Any]:
    """Every knob as plain JSON values, ranges as [low, high] (for the manifest)."""
    sc = s.seed_collection
    return {"source": s.source, "seed": s.seed, "contexts": s.contexts, "held_out_contexts": s.held_out_contexts,
            "questions_per_context": list(span(s.questions_per_context)),
            "documents_per_context": list(span(s.documents_per_context)),
            "distractor_files": list(span(s.distractor_files)), "max_file_chars": s.max_file_chars,
            "filler_lines": list(span(s.filler_lines)), "answer_position": s.answer_position,
            "file_names": s.file_names, "compute_share": s.compute_share,
            "qa_mix": s.qa_mix.model_dump(exclude_unset=True), "max_examples": s.max_examples,
            "entity_kinds": entity_kinds(s), "math_tasks": s.math_tasks, "paper_revision": s.paper_revision,
            "seed_collection": {"dataset": sc.dataset, "configs": list(sc.configs), "revision": sc.revision,
                                "path": sc.path, "max_contexts": sc.max_contexts}}


def construction_knobs(s: ContextSection) -> dict[str, Any]:
    """The knobs a constructed task depends on (recorded in each task's meta)."""
    k = knobs(s)
    out = {key: k[key] for key in ("seed", "documents_per_context", "distractor_files", "max_file_chars",
                                   "filler_lines", "answer_position", "file_names", "compute_share", "qa_mix",
                                   "max_examples")}
    if s.entity_kinds:  # recorded when it narrows the generator (tasks of every kind keep their meta)
        out["entity_kinds"] = entity_kinds(s)
    return out

"""The ``tasks`` section: the benchmark tasks per domain and the context-based training tasks."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from lis.config.base import Domain, NonNegFloat, NonNegInt, PosInt, Section, Share

Range = NonNegInt | Annotated[list[NonNegInt], Field(min_length=2, max_length=2)]
"""a number n (as [n, n]), or [low, high]: a draw per context or task, both ends included"""
RANGES = {"questions_per_context": 1, "documents_per_context": 1, "distractor_files": 0, "filler_lines": 0}
"""the ranges of the context section, and the least low end each takes"""


class DomainSource(Section):
    source: Literal["samples", "hub", "generated"]
    """samples: the offline samples in data/; hub: the benchmark on the hub"""
    dataset: Literal["paper", "original"] = "paper"
    revision: str | None = None
    limit: Annotated[int, Field(ge=1)] | None = None
    """at most this many tasks (null: all)"""
    seed: int = 0


class QaMix(Section):
    single_choice: NonNegFloat = 0.0
    multiple_choice: NonNegFloat = 0.0
    free_form: NonNegFloat = 0.0


class SeedCollection(Section):
    """Where the Instruction Pre-Training seed rows come from: the hub or a local JSONL."""

    dataset: str = "instruction-pretrain/ft-instruction-synthesizer-collection"
    configs: Annotated[list[str], Field(min_length=1)] = ["squad"]
    revision: str | None = None
    path: str | None = None
    """a local JSONL of rows in the hub's format (repository-relative)"""
    max_contexts: Annotated[int, Field(ge=1)] | None = None


class ContextSection(Section):
    """The context-based tasks of RL (the paper's recipe: documents placed as files, the answer
    written to /testbed/answer.txt). Beyond the schema: ranges run from their least value up,
    qa_mix has a positive weight, and generated contexts keep some for training."""

    source: Literal["generated", "seed", "paper"] = "generated"
    """generated: offline contexts made here; seed: Instruction Pre-Training rows; paper: the authors' data"""
    paper_revision: str | None = None
    seed: int = 0
    contexts: PosInt = 100
    held_out_contexts: NonNegInt = 10
    """contexts kept out of training (their tasks are the held-out split)"""
    questions_per_context: Range = [3, 4]
    documents_per_context: Range = [1, 4]
    distractor_files: Range = [1, 3]
    max_file_chars: Annotated[int, Field(ge=200)] = 4000
    filler_lines: Range = [3, 10]
    answer_position: Literal["start", "middle", "end", "random"] = "random"
    file_names: Literal["entity", "neutral"] = "neutral"
    compute_share: Share = 0.3
    """share of questions that need a computation over the documents"""
    qa_mix: Annotated[QaMix, Field(json_schema_extra={"minProperties": 1})] = QaMix(
        single_choice=0.3, multiple_choice=0.2, free_form=0.5)
    """question kinds and their weights (a kind left out: weight 0)"""
    max_examples: NonNegInt = 3
    entity_kinds: Annotated[list[Literal["town", "company", "ship", "library"]], Field(min_length=1)] | None = None
    """the generator's kinds of entity (null: every kind)"""
    math_tasks: PosInt | None = None
    seed_collection: SeedCollection = SeedCollection()

    @model_validator(mode="after")
    def _consistent(self) -> "ContextSection":
        for key, least in RANGES.items():
            value = getattr(self, key)
            lo, hi = (value, value) if isinstance(value, int) else value
            if lo < least or hi < lo:
                raise ValueError(f"{key} = {value!r} is not a range from {least} up (use [low, high] with "
                                 f"{least} <= low <= high)")
        if sum(dict(self.qa_mix).values()) <= 0:
            raise ValueError("qa_mix has no positive weight (give at least one question kind a weight above 0)")
        if self.source == "generated" and self.held_out_contexts >= self.contexts:
            raise ValueError(f"held_out_contexts ({self.held_out_contexts}) must be below contexts ({self.contexts}): "
                             "keep some contexts for training")
        return self


class TasksSection(Section):
    samples_dir: str
    bench_dataset: str
    domains: dict[Domain, DomainSource]
    context: ContextSection

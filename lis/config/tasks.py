"""The ``tasks`` section: the benchmark tasks per domain and the context-based training tasks."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from lis.config.base import Domain, NonNegFloat, NonNegInt, Section, Share

Range = NonNegInt | Annotated[list[NonNegInt], Field(min_length=2, max_length=2)]
"""a number, or [low, high] drawn per context"""


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
    """The context-based tasks of RL (lis.context_tasks.settings checks ranges are ordered and
    held-out contexts below contexts)."""

    source: Literal["generated", "seed", "paper"]
    paper_revision: str | None = None
    seed: int
    contexts: Annotated[int, Field(ge=1)]
    held_out_contexts: NonNegInt
    questions_per_context: Range
    documents_per_context: Range
    distractor_files: Range
    max_file_chars: Annotated[int, Field(ge=200)]
    filler_lines: Range
    answer_position: Literal["start", "middle", "end", "random"]
    file_names: Literal["entity", "neutral"]
    compute_share: Share
    qa_mix: Annotated[QaMix, Field(json_schema_extra={"minProperties": 1})]
    max_examples: NonNegInt
    entity_kinds: Annotated[list[Literal["town", "company", "ship", "library"]], Field(min_length=1)] | None
    math_tasks: Annotated[int, Field(ge=1)] | None
    seed_collection: SeedCollection


class TasksSection(Section):
    samples_dir: str
    bench_dataset: str
    domains: dict[Domain, DomainSource]
    context: ContextSection

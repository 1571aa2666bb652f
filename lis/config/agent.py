"""The ``agent``, ``scoring``, ``eval`` and ``jobs`` sections: how an episode runs, how it is
scored, how evaluation repeats it, and which models and domains the pipeline runs."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from lis.config.base import Domain, NonNegFloat, PosFloat, PosInt, Section, Share, unique

Tokens = Annotated[int, Field(ge=256)]


class Observation(Section):
    """How a long tool output is cut before the model sees it."""

    max_lines: Annotated[int, Field(ge=2)]
    keep: PosInt
    max_chars: Annotated[int, Field(ge=100)]


class Editor(Section):
    view_extensions: Annotated[unique(list[Annotated[str, Field(pattern=r"^\.[^/\s]+$")]]), Field(min_length=1)] | None
    """file types str_replace_editor may view (null: any)"""


class AgentSection(Section):
    max_turns: PosInt
    """the paper's max_steps"""
    max_context_tokens: Tokens
    """the conversation may not grow past this (the paper's max_token_limit)"""
    max_context_tokens_by_domain: dict[str, Tokens]
    episode_timeout_s: PosFloat
    observation: Observation
    editor: Editor


class Judge(Section):
    model: str
    """a models entry"""
    repeats: PosInt = 4
    """judgements per answer (majority vote)"""
    temperature: NonNegFloat = 0.7
    max_tokens: PosInt = 16384


class ScoringSection(Section):
    judge: Judge | None
    """the LLM judge of free-form answers (null: rule-based scoring only)"""
    judge_cache: str
    ifbench_variants: Literal["ifbench8", "lis5"]


class EvalSection(Section):
    repeats: dict[str, PosInt]
    """episodes per task, per domain"""
    seed: int
    workers: PosInt
    deterministic: bool
    max_attempts: PosInt
    max_error_share: Share


class JobsSection(Section):
    """Which models and domains the pipeline runs (only params.yaml may set it: DVC reads it)."""

    models: Annotated[unique(list[str]), Field(min_length=1)]
    external: unique(list[str]) = []
    """models evaluated but not trained here"""
    long_context_ablation: unique(list[str])
    domains: unique(list[Domain])
    grpo_data: unique(list[Literal["files", "prompt", "math"]]) = []
    replicates: unique(list[PosInt]) = []
    """extra seeds of the learning check"""

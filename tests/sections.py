"""Typed params sections for tests: the paper's values (params.yaml under the full profile) with a test's changes
merged in (blocks merge key by key), validated by the section models as the pipeline validates them. GRPO
generates in the training process unless a test says otherwise."""
from __future__ import annotations

from typing import Any

from lis.config.training import GrpoSection, SftSection, Vllm
from lis.params import deep_merge, load, section_model
from tests.conftest import ROOT


def paper(name: str) -> dict[str, Any]:
    """The ``name`` section of the full profile, as a dict."""
    return load(ROOT, profile="full").section(name)


def grpo(**changes: Any) -> GrpoSection:
    base = paper("grpo")
    base["vllm"]["mode"] = "none"
    return section_model(GrpoSection, deep_merge(base, changes), "grpo", "the test")


def sft(**changes: Any) -> SftSection:
    return section_model(SftSection, deep_merge(paper("sft"), changes), "sft", "the test")


def vllm(**changes: Any) -> Vllm:
    """A ``grpo.vllm`` block in server mode: the paper's, without its command (the test starts what it needs) and
    without its GPU environment."""
    base = {**paper("grpo")["vllm"], "command": None, "env": {}}
    return section_model(Vllm, deep_merge(base, changes), "grpo.vllm", "the test")


def changed(section, **changes: Any):
    """``section`` (a validated section model) with ``changes`` merged in, validated again."""
    name = type(section).__name__
    return section_model(type(section), deep_merge(section.model_dump(exclude_unset=True), changes), name, "the test")

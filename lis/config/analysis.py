"""The sections of the stages after evaluation: ``behaviour``, ``efficiency``, ``throughput``,
``sandbox_memory``, ``report``, and of ``lis doctor``."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from lis.config.base import NonNegFloat, NonNegInt, PosInt, Section, Share, unique

Mode = Literal["sandbox", "sandbox_inline", "vanilla"]
Replicates = Annotated[int, Field(ge=100)]
ModelNames = list[Annotated[str, Field(min_length=1)]]


class RlPair(Section):
    before: str
    after: str
    label: str | None = None
    """the table's column name (default: before → after)"""


class BehaviourSection(Section):
    groups: dict[str, ModelNames] = {}
    """Table 4: group name -> models, e.g. {strong: [a, b], weak: [qwen3-4b]}"""
    rl_pairs: list[RlPair] = []
    """Tables 8 and 9: [{before: base, after: grpo-files, label: 4B}]"""
    tool_mode: Mode = "sandbox"
    """the mode whose tool use makes Figure 2 and Tables 4 and 8"""
    modes: Annotated[list[Mode], Field(min_length=1)] = ["sandbox", "vanilla"]
    """what --jobs reads per model and domain"""
    figure2_models: ModelNames | None = None
    """models averaged in Figure 2's per-domain rows (null: all)"""
    replicates: Replicates = 2000
    """bootstrap replicates"""
    seed: NonNegInt = 0
    """bootstrap seed"""
    cluster: Literal["episode", "task"] = "episode"
    """bootstrap unit: episode, or task (a task's repeats resampled together)"""
    include_reasoning: bool = False
    """Table 9 also counts the reasoning channel of thinking models"""


class EfficiencySection(Section):
    replicates: Replicates
    """bootstrap replicates of the ratios' intervals"""


class ThroughputSection(Section):
    """The QPM benchmark: the same tasks and endpoint with and without the sandbox."""

    model: str = "base"
    """a models entry: the one endpoint every mode runs against (only params.yaml may set it: dvc.yaml
    names a dependency after it)"""
    serve: Literal["http", "direct"] = "http"
    """http: a local or scripted model is served on loopback and called through the OpenAI client, as a
    vLLM endpoint is; direct: in-process"""
    domains: Annotated[list[str], Field(min_length=1)] = ["math"]
    tasks: PosInt = 8
    """per domain: the first N tasks of data/tasks/<domain>.jsonl"""
    concurrency: PosInt = 8
    """episodes at once (and sandboxes at once)"""
    repeats: PosInt = 3
    modes: Annotated[unique(list[Mode]), Field(min_length=1)] = ["vanilla", "sandbox"]
    warm: NonNegInt = 0
    """sandboxes started before the clock starts (0: sandbox start is part of the cost)"""
    warmup: NonNegInt = 1
    """untimed episodes per mode before the timed runs (model load, connections, caches)"""
    seed: int = 0
    max_error_share: Share = 0.05
    """a run with more infrastructure errors than this share fails"""


class SandboxMemorySection(Section):
    n: PosInt
    """sandboxes started at once"""
    settle_s: NonNegFloat
    interval_s: Annotated[float, Field(ge=0.001)]


class ReportSection(Section):
    title: str
    min_n: PosInt = 30
    """cells with fewer episodes are marked"""
    paper_version: str = "v1"
    """which arXiv version's numbers the tables compare with"""
    trajectories: bool = True
    """write the trajectory viewer"""


class DoctorSection(Section):
    needs: unique(list[Literal["docker", "image", "gpu", "vllm", "hf_hub", "hub_models", "served", "bubblewrap"]])
    min_free_disk_gb: NonNegFloat

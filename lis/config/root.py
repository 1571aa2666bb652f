"""The merged params (params.yaml + the profile overlay) as one model: a field per section."""
from __future__ import annotations

from lis.config.agent import AgentSection, EvalSection, JobsSection, ScoringSection
from lis.config.analysis import (BehaviourSection, DoctorSection, EfficiencySection, ReportSection,
                                 SandboxMemorySection, ThroughputSection)
from lis.config.base import Section
from lis.config.models import ModelEntry, ModelName
from lis.config.sandbox import ImageSection, SandboxSection
from lis.config.serving import ServeSection
from lis.config.tasks import TasksSection
from lis.config.training import (BaseSection, GrpoSection, LlmRlSection, SftSection, TeacherSection)


class ParamsModel(Section):
    profile: str
    """name of the overlay in workflow/params/ to apply"""
    image: ImageSection
    sandbox: SandboxSection
    tasks: TasksSection
    models: dict[ModelName, ModelEntry]
    agent: AgentSection
    scoring: ScoringSection
    eval: EvalSection
    jobs: JobsSection
    base: BaseSection
    teacher: TeacherSection
    sft: SftSection
    grpo: GrpoSection
    llm_rl: LlmRlSection
    serve: ServeSection
    behaviour: BehaviourSection = BehaviourSection()
    efficiency: EfficiencySection = None  # type: ignore[assignment]  # optional, no default: absent is absent
    throughput: ThroughputSection = None  # type: ignore[assignment]
    sandbox_memory: SandboxMemorySection = None  # type: ignore[assignment]
    report: ReportSection
    doctor: DoctorSection


SECTIONS: dict[str, type[Section]] = {
    name: next(t for t in getattr(f.annotation, "__args__", (f.annotation,)) if t is not type(None))
    for name, f in ParamsModel.model_fields.items() if name not in ("profile", "models")
}
"""The model of each section (``models`` is a mapping of entries: :class:`ModelEntry` each)."""

"""What every table builder needs: the params, the declared inputs, a reader that records what was read,
the number formatter, which of our models are the paper's, and links to the trajectory viewer."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.agent.trajectory import Trajectory
from lis.records import MetricsRecord, check
from lis.report.cells import Formatter
from lis.report.inputs import REFERENCE, Job, Reader, ReportInputs
from lis.report.paper_identity import Identity, identify
from lis.report.paper_numbers import Reference, load, lookup
from lis.report.viewer import job_page_rel

VIEWER_DIR = "trajectories"

BENCHMARK_DOMAINS = ("math", "physics", "chem", "biomed", "long_context", "instruct_follow")
DOMAIN_TITLES = {"math": "Math", "physics": "Physics", "chem": "Chemistry", "biomed": "Biomedicine",
                 "long_context": "Long-Context", "instruct_follow": "Instruction Following",
                 "instruct_pretrain": "Held-out context tasks"}


@dataclass
class Context:
    root: Path
    data: dict[str, Any]            # merged params
    profile: str
    inputs: ReportInputs
    reader: Reader
    fmt: Formatter
    identities: dict[str, Identity] = field(default_factory=dict)
    paper_file: Path | None = None
    _records: dict[Job, list[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def build(cls, root: Path, data: dict[str, Any], profile: str) -> "Context":
        sec = data["report"]
        inputs = ReportInputs.from_params(data)
        ctx = cls(Path(root), data, profile, inputs, Reader(root), Formatter(min_n=int(sec.get("min_n", 30))))
        ctx.reader.text(REFERENCE["paper_numbers"])        # recorded (hash) and validated below
        ctx.paper_file = ctx.reader.path(REFERENCE["paper_numbers"])
        load(ctx.paper_file)
        manifests = {m: ctx.reader.model_manifest(m) for m in inputs.model_dirs}
        ctx.identities = identify(manifests, data.get("models", {}))
        return ctx

    # -- settings -------------------------------------------------------------------------------
    @property
    def settings(self) -> dict[str, Any]:
        return self.data["report"]

    @property
    def paper_version(self) -> str:
        return str(self.settings.get("paper_version") or "v1")

    def benchmark_domains(self) -> list[str]:
        """The evaluated domains that are benchmarks of the paper's Table 2 (not the held-out
        context tasks of the learning check), in the paper's order."""
        return [d for d in BENCHMARK_DOMAINS if d in self.inputs.domains]

    # -- eval jobs ------------------------------------------------------------------------------
    def metrics(self, model: str, domain: str, mode: str) -> dict[str, Any] | None:
        """The job's metrics.json, or None when the params call for no such job."""
        job = self.inputs.job(model, domain, mode)
        if job is None:
            return None
        m = self.reader.json(job.metrics)
        check(MetricsRecord, m, where=f"{job.metrics} is not a job's metrics")  # no 750 % accuracy, no text n
        return m

    def records(self, model: str, domain: str, mode: str) -> list[dict[str, Any]]:
        job = self.inputs.job(model, domain, mode)
        if job is None:
            return []
        if job not in self._records:
            rows = self.reader.jsonl(job.trajectories)
            for n, row in enumerate(rows, 1):
                check(Trajectory, row, where=f"{job.trajectories} record {n}")
            self._records[job] = rows
        return self._records[job]

    def job_files(self, model: str, domain: str, mode: str) -> list[str]:
        job = self.inputs.job(model, domain, mode)
        return [] if job is None else [job.metrics]

    def job_href(self, model: str, domain: str, mode: str) -> str | None:
        """The trajectory viewer's page of a job's episodes (relative to the report folder), when
        the report renders the viewer (report.trajectories)."""
        if not self.inputs.viewer or not self.inputs.has_job(model, domain, mode):
            return None
        return f"{VIEWER_DIR}/{job_page_rel(model, domain, mode)}"

    # -- the paper ------------------------------------------------------------------------------
    def identity(self, model: str) -> Identity | None:
        return self.identities.get(model)

    def paper(self, table: str, **keys: Any) -> Reference | None:
        """The published cell, of the configured paper version if it has one, else the table's default."""
        ref = lookup(table, version=self.paper_version, path=self.paper_file, **keys)
        return ref if ref is not None else lookup(table, path=self.paper_file, **keys)

    def paper_models_note(self, table: str, key: str = "model") -> str:
        """'the paper's models were not run in this profile' with the rows the paper has."""
        pn = load(self.paper_file)
        names = []
        for c in pn.table(table)["cells"]:
            mid = c.get(key)
            if mid and mid in pn.data["models"] and mid not in names:
                names.append(mid)
        shown = ", ".join(pn.data["models"][m]["name"] for m in names)
        return (f"Paper: none of the paper's models ran in this profile, so no published number goes beside ours "
                f"(the paper's rows: {shown}; data/reference/paper_numbers.yaml, {pn.table(table)['paper_ref']}).")

    def require_model_entry(self, name: str, where: str) -> None:
        if name not in self.data.get("models", {}):
            raise LisError(f"params {where}: '{name}' is not a models entry", "name a models entry (params.yaml models:)")

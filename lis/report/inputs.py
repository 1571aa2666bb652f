"""What the report reads: exactly the outputs its stage declares, computed from the params' job lists.

    inputs = ReportInputs.from_params(params.data)
    inputs.files()              # every file the report may open (the Snakemake rule's inputs, expanded)
    inputs.metrics("base", "math", "sandbox")   # data/eval/base/math/sandbox/metrics.json

The Snakemake rule's input list is :func:`declared_inputs`, so the two cannot drift apart. The
report never globs ``data/``: a called-for file that is missing is an error naming it, and a file no
job calls for is never read.
"""
from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lis import layout
from lis.errors import LisError
from lis.manifest import parse_json
from lis.records import ImageManifestRecord, ModelManifestRecord, check
from lis.util.jsonl import iter_jsonl

ANALYSIS = {
    "behaviour": layout.BEHAVIOUR,
    "turns": layout.TURNS,
    "efficiency": layout.EFFICIENCY,
    "storage": layout.STORAGE,
    "throughput": layout.THROUGHPUT,
}
IMAGE_MANIFEST = layout.IMAGE_MANIFEST
REFERENCE = {
    "paper_numbers": layout.PAPER_NUMBERS,
    "design": layout.DESIGN_TABLES,
}
MODES = ("vanilla", "sandbox")
LEARNING_DOMAIN = "instruct_pretrain"     # the held-out context tasks of the learning check
REPLICATE_MODELS = ("sft", "grpo-files")  # what each replicate of the learning check trains and evaluates
TRAINED = ("base", "sft", "rft", "llm-rl")


def trained_models(jobs: dict) -> list[str]:
    """The models the pipeline trains (lis.params.trained_models, restated: the report stage's code
    is its own)."""
    return [*TRAINED, *(f"grpo-{v}" for v in jobs.get("grpo_data", []))]


@dataclass(frozen=True)
class Job:
    model: str
    domain: str
    mode: str

    @property
    def folder(self) -> str:
        return layout.EVAL_JOB.format(model=self.model, domain=self.domain, mode=self.mode)

    @property
    def metrics(self) -> str:
        return f"{self.folder}/metrics.json"

    @property
    def trajectories(self) -> str:
        return f"{self.folder}/trajectories.jsonl"


@dataclass
class ReportInputs:
    """The declared inputs of the report stage, from the params' ``jobs`` section."""

    jobs: list[Job]
    domains: list[str]
    models: list[str]
    runs: list[str]                       # training runs: grpo-<variant> per jobs.grpo_data, llm-rl
    model_dirs: list[str]                 # data/models/<name> whose manifests the report reads
    viewer: bool = True                   # report.trajectories: every job's episodes in the viewer
    extra: dict[str, str] = field(default_factory=dict)
    replicates: list[int] = field(default_factory=list)   # jobs.replicates: the learning check over seeds

    @classmethod
    def from_params(cls, data: dict[str, Any]) -> "ReportInputs":
        jobs = data["jobs"]
        models, domains = list(jobs["models"]), list(jobs["domains"])
        job_list = [Job(m, d, mode) for m in models for d in domains for mode in MODES]
        job_list += [Job(m, "long_context", "sandbox_inline") for m in jobs.get("long_context_ablation", [])]
        # training logs: every GRPO data variant configured, and the LLM-RL baseline when it is evaluated
        runs = [f"grpo-{v}" for v in jobs.get("grpo_data", [])] + (["llm-rl"] if "llm-rl" in models else [])
        # manifests (or external cards) of every evaluated model, and of the training chain they come
        # from (base and sft exist whenever a trained model beyond base is evaluated)
        trained = set(trained_models(jobs))
        chain = ["base", "sft"] if any(m in trained and m != "base" for m in models) else []
        model_dirs = list(dict.fromkeys([*chain, *models]))
        viewer = bool((data.get("report") or {}).get("trajectories", True))
        return cls(job_list, domains, models, runs, model_dirs, viewer, replicates=list(jobs.get("replicates", [])))

    def job(self, model: str, domain: str, mode: str) -> Job | None:
        j = Job(model, domain, mode)
        return j if j in self.jobs else None

    def has_job(self, model: str, domain: str, mode: str) -> bool:
        return Job(model, domain, mode) in self.jobs

    def run_files(self, run: str) -> tuple[str, str]:
        return layout.RUN_METRICS.format(run=run), layout.RUN_LOG.format(run=run)

    def learning_jobs(self) -> list[Job]:
        """The jobs whose episodes the learning check pairs by task: every model's held-out context
        tasks, in sandbox and in vanilla mode."""
        return [j for j in self.jobs if j.domain == LEARNING_DOMAIN and j.mode in ("sandbox", "vanilla")]

    def replicate_job(self, replicate: int, model: str) -> Job:
        """Replicate ``replicate``'s held-out evaluation of ``model`` (sft | grpo-files); replicate 0 is the
        main run's job (workflow/rules/replicates.smk)."""
        if replicate == 0:
            return Job(model, LEARNING_DOMAIN, "sandbox")
        return Job(f"replicates/r{replicate}/{model}", LEARNING_DOMAIN, "sandbox")

    @staticmethod
    def replicate_run(replicate: int) -> str:
        return "grpo-files" if replicate == 0 else f"replicates/r{replicate}/grpo-files"

    def replicate_files(self) -> list[str]:
        out: list[str] = []
        for r in self.replicates:
            for m in REPLICATE_MODELS:
                j = self.replicate_job(r, m)
                out += [j.metrics, j.trajectories, layout.REPLICATE_MODEL.format(replicate=r, model=m)]
            out += list(self.run_files(self.replicate_run(r)))
        return out

    def files(self) -> list[str]:
        """Every input path (folders for the model directories), in a stable order."""
        out = [IMAGE_MANIFEST, *REFERENCE.values(), *ANALYSIS.values()]
        out += [j.metrics for j in self.jobs]
        out += [j.trajectories for j in (self.jobs if self.viewer else self.learning_jobs())]
        for r in self.runs:
            out += list(self.run_files(r))
        out += [layout.MODEL.format(model=m) for m in self.model_dirs]
        out += self.replicate_files()
        return list(dict.fromkeys(out))


def declared_inputs(data: dict[str, Any]) -> list[str]:
    """The report rule's input files (workflow/rules/report.smk)."""
    return ReportInputs.from_params(data).files()


# -- reading, with one-line errors that name the file --------------------------------------------
class Reader:
    """Reads inputs relative to the project root; every file read is recorded (with its size) for
    the provenance of the tables that used it."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.read: dict[str, str] = {}      # path -> sha256 of what was read

    def path(self, rel: str) -> Path:
        return self.root / rel

    def exists(self, rel: str) -> bool:
        return self.path(rel).exists()

    def text(self, rel: str) -> str:
        """The file's text (recorded with its hash); a missing or unreadable file is a LisError naming it."""
        try:
            data = self.path(rel).read_bytes()
        except FileNotFoundError:
            raise self._missing(rel) from None
        except IsADirectoryError:
            raise LisError(f"{rel} is a folder, not a file", "rerun the stage that produces it") from None
        except OSError as e:
            raise LisError(f"{rel} cannot be read ({e.strerror or e})", "check the file and its permissions") from None
        self.read[rel] = hashlib.sha256(data).hexdigest()
        return data.decode("utf-8", errors="replace")

    def yaml(self, rel: str) -> Any:
        import yaml

        text = self.text(rel)
        try:
            return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as e:
            raise LisError(f"{rel} is not valid YAML ({' '.join(str(e).split())[:120]})", "fix the file") from None

    def _missing(self, rel: str) -> LisError:
        return LisError(f"{rel} is missing (a declared input of the report)",
                        "run the stage that produces it: snakemake --cores all paper (or dvc repro)")

    def json(self, rel: str, expect: type | None = dict) -> Any:
        """A declared JSON input; every one the report reads is an object (a manifest, metrics, an
        analysis), so anything else is refused in one line naming the file."""
        obj = parse_json(self.text(rel), rel)
        if expect is not None and not isinstance(obj, expect):
            raise LisError(f"{rel} holds {type(obj).__name__} JSON, not an object",
                           "rerun the stage that produces it")
        return obj

    def image_manifest(self, rel: str) -> dict[str, Any]:
        """The image stage's manifest (:class:`lis.records.ImageManifestRecord`), validated."""
        obj = self.json(rel)
        check(ImageManifestRecord, obj, where=rel)
        return obj

    def jsonl(self, rel: str) -> list[dict[str, Any]]:
        """A declared JSONL input, read strictly: a line that is not a JSON object is one error naming it."""
        return [rec for _, rec in iter_jsonl(self.text(rel), mode="strict", where=rel,
                                             hint="rerun the stage that produces it")]

    def csv(self, rel: str) -> list[dict[str, str]]:
        text = self.text(rel)
        try:
            return list(csv.DictReader(io.StringIO(text, newline="")))
        except csv.Error as e:
            raise LisError(f"{rel} cannot be read as CSV ({' '.join(str(e).split())[:120]})",
                           "rerun the stage that produces it") from None

    def model_manifest(self, name: str) -> dict[str, Any]:
        """data/models/<name>/manifest.json, or the card of an external model (card.json); a folder
        with neither is an error naming it."""
        for f in ("manifest.json", "card.json"):
            rel = f"{layout.MODEL.format(model=name)}/{f}"
            if self.path(rel).is_file():
                obj = self.json(rel)
                if f == "manifest.json":
                    check(ModelManifestRecord, obj, where=rel)
                return {"_file": rel, **obj}
        folder = layout.MODEL.format(model=name)
        if not self.path(folder).is_dir():
            raise self._missing(folder)
        raise LisError(f"{folder} has neither manifest.json nor card.json",
                       "rerun the stage that produces the model (or its model card)")


"""The work of the evaluation stages — ``eval_vanilla``, ``eval_sandbox``, ``eval_inline`` and
``eval_replicate`` declare their jobs (one module each); every job runs ``lis eval run``, made from
``OPTIONS`` here (lis/cli/stage_command.py), which calls :func:`resolve` and :func:`run`. A module
shared by stages, not a stage: it declares no ``STAGE``.

One job is (model, domain, mode): its episodes run, or resume from the job's journal, by
:func:`lis.eval.runner.run_job`; a models entry with ``serve.auto`` is started for the job (and the judge's
entry, when scoring names one) and stopped after it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lis import layout
from lis.eval.jobs import EvalJob, with_model_path
from lis.eval.runner import run_job
from lis.manifest import read_image_manifest
from lis.models.serve_plan import serving
from lis.params import Params
from lis.runtime import model_specs
from lis.stages.spec import Option

log = logging.getLogger("lis.eval")

ABOUT = """Run (or resume) every episode of one (model, domain, mode) job; write trajectories.jsonl and metrics.json.

Finished episodes are kept in a journal (data/journal/...), so a killed run resumes where it stopped; episodes that
ended in an infrastructure error are retried (eval.max_attempts) and never scored 0. Exit status: 0 done; 2 a usage
error, or too many errors (eval.max_error_share); 130 interrupted."""
OPTIONS = (
    Option("--model -m", "A models entry of params.yaml.", default=...),
    Option("--domain -d", "math | physics | chem | biomed | long_context | instruct_follow.", default=...),
    Option("--mode", "vanilla | sandbox | sandbox_inline (long context: documents in the prompt).", default=...),
    Option("--tasks", "Task JSONL (default data/tasks/<domain>.jsonl).", Path, to="input"),
    Option("--image-manifest", "The image stage's manifest (sandbox modes).", Path, Path(layout.IMAGE_MANIFEST),
           to="input"),
    Option("--out", "Output folder (default data/eval/<model>/<domain>/<mode>).", Path, to="output"),
    Option("--model-path", "Evaluate the model folder PATH with the settings of the local entry --model (e.g. a "
           "replicate of a trained model); its journal is kept apart from the entry's own.", Path),
    Option("--limit", "Only the first N tasks.", int, low=1, high=10000000),
    Option("--workers", "Episodes at once (default eval.workers).", int, low=1, high=1024),
    Option("--wait", "If another process runs this job, wait for it instead of refusing.", bool, False),
)


@dataclass(frozen=True)
class Settings:
    """One job (:func:`resolve`): the params, the job, its journal (the entry's own, or one per folder
    with ``--model-path``), and the run's limits."""

    params: Params
    job: EvalJob
    journal: Path
    limit: int | None = None
    workers: int | None = None
    wait: bool = False


def resolve(params: Params, model: str, domain: str, mode: str, *, model_path: Path | None = None,
            limit: int | None = None, workers: int | None = None, wait: bool = False) -> Settings:
    """The job ``model`` / ``domain`` / ``mode``. With ``model_path`` the local entry ``model`` is pointed at
    that folder (its settings, that folder's weights) and the job's journal is kept apart from the entry's.
    Raises LisError for an unknown mode, or a ``model_path`` that is no model folder or whose entry is not
    local."""
    job = EvalJob(model, domain, mode)
    journal = job.journal() if model_path is None else with_model_path(params, model, model_path, job)
    return Settings(params=params, job=job, journal=journal, limit=limit, workers=workers, wait=wait)


def run(settings: Settings, inputs: dict[str, Path | None], outputs: dict[str, Path | None]) -> dict[str, Any]:
    """Run (or resume) the job; write ``trajectories.jsonl`` and ``metrics.json`` into ``outputs["out"]``
    (None: data/eval/<model>/<domain>/<mode>) and return the metrics. ``inputs``: ``tasks`` (None:
    data/tasks/<domain>.jsonl) and ``image_manifest`` (the image stage's manifest; read in the sandbox
    modes when it is there)."""
    p, job = settings.params, settings.job
    image = inputs.get("image_manifest")
    manifest = read_image_manifest(image) if job.mode != "vanilla" and image is not None and image.exists() else None
    judge = p.settings("scoring").judge
    with serving(model_specs(p), [job.model, judge and judge.model], p.root):  # entries with serve.auto: started here
        m = run_job(p, job, inputs.get("tasks") or layout.path(layout.TASKS, domain=job.domain),
                    out_dir=outputs.get("out") or job.out_dir(), journal_path=settings.journal, image_manifest=manifest,
                    limit=settings.limit, workers=settings.workers, wait=settings.wait)
    acc = "–" if m["accuracy"] is None else f"{m['accuracy']:.3f}"
    log.info("%s: accuracy %s (95%% CI %s) over %d scored of %d episodes, %d errors", job.name, acc, m["ci95"],
             m["scored"], m["n"], m["errors"])
    return m

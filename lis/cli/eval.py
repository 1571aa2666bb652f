"""``lis eval``: run one evaluation job, and summarise what has been run."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.eval.jobs import EvalJob
from lis.eval.jobs import with_model_path
from lis.eval.runner import run_job
from lis.manifest import read_image_manifest
from lis.models.serve_plan import serving
from lis.sandbox import registry
from lis.util.log import setup_logging

app = typer.Typer(help="Evaluate models in the sandbox and directly (vanilla), and summarise.", no_args_is_help=True)
log = logging.getLogger("lis.eval")


# `lis ... run`: a stage command, attached from its lis/stages declaration (lis.cli.GROUPS)
def run(model: str = typer.Option(..., "--model", "-m", help="A models entry of params.yaml."),
        domain: str = typer.Option(..., "--domain", "-d", help="math | physics | chem | biomed | long_context | instruct_follow."),
        mode: str = typer.Option(..., "--mode", help="vanilla | sandbox | sandbox_inline (long context: documents in the prompt)."),
        tasks_file: Optional[Path] = typer.Option(None, "--tasks", help="Task JSONL (default data/tasks/<domain>.jsonl)."),
        image_manifest: Path = typer.Option(Path(layout.IMAGE_MANIFEST), "--image-manifest",
                                            help="The image stage's manifest (sandbox modes)."),
        out: Optional[Path] = typer.Option(None, "--out", help="Output folder (default data/eval/<model>/<domain>/<mode>)."),
        model_path: Optional[Path] = typer.Option(None, "--model-path",
                                                  help="Evaluate the model folder PATH with the settings of the local "
                                                       "entry --model (e.g. a replicate of a trained model); its "
                                                       "journal is kept apart from the entry's own."),
        limit: Optional[int] = typer.Option(None, "--limit", max=10000000, min=1, help="Only the first N tasks."),
        workers: Optional[int] = typer.Option(None, "--workers", max=1024, min=1, help="Episodes at once (default eval.workers)."),
        wait: bool = typer.Option(False, "--wait", help="If another process runs this job, wait for it instead of "
                                                        "refusing."),
        profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
        log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Run (or resume) every episode of one (model, domain, mode) job; write trajectories.jsonl and metrics.json.

    Finished episodes are kept in a journal (data/journal/...), so a killed run resumes where it stopped;
    episodes that ended in an infrastructure error are retried (eval.max_attempts) and never scored 0.
    Exit status: 0 done; 2 a usage error, or too many errors (eval.max_error_share); 130 interrupted.
    """

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    p = load_params(profile, params_file)
    job = EvalJob(model, domain, mode)
    journal = job.journal()
    if model_path is not None:
        journal = with_model_path(p, model, model_path, job)
    manifest = read_image_manifest(image_manifest) if mode != "vanilla" and image_manifest.exists() else None
    judge = p.section("scoring").get("judge") or {}
    with serving(p.section("models"), [model, judge.get("model")], p.root):  # entries with serve.auto: started here
        m = run_job(p, job, tasks_file or layout.path(layout.TASKS, domain=domain), out_dir=out or job.out_dir(),
                    journal_path=journal, image_manifest=manifest, limit=limit, workers=workers, wait=wait)
    acc = "–" if m["accuracy"] is None else f"{m['accuracy']:.3f}"
    log.info("%s: accuracy %s (95%% CI %s) over %d scored of %d episodes, %d errors", job.name, acc, m["ci95"],
             m["scored"], m["n"], m["errors"])

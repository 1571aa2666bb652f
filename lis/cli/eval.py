"""``lis eval``: run one evaluation job (the evaluation stages' command: lis/stages/evaluation.py does the
work), and summarise what has been run (``lis eval summary``: lis/cli/eval_summary.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.sandbox import registry
from lis.stages import evaluation as stage
from lis.util.log import setup_logging

app = typer.Typer(help="Evaluate models in the sandbox and directly (vanilla), and summarise.", no_args_is_help=True)


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
        profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile, sets: Optional[list[str]] = Sets,
        log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Run (or resume) every episode of one (model, domain, mode) job; write trajectories.jsonl and metrics.json.

    Finished episodes are kept in a journal (data/journal/...), so a killed run resumes where it stopped;
    episodes that ended in an infrastructure error are retried (eval.max_attempts) and never scored 0.
    Exit status: 0 done; 2 a usage error, or too many errors (eval.max_error_share); 130 interrupted.
    """

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    settings = stage.resolve(load_params(profile, params_file, sets), model, domain, mode, model_path=model_path,
                             limit=limit, workers=workers, wait=wait)
    stage.run(settings, {"tasks": tasks_file, "image_manifest": image_manifest}, {"out": out})

"""``lis throughput``: queries per minute, vanilla vs sandbox, against one model endpoint (a stage)."""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.bench.throughput import model_endpoint, run_throughput, ThroughputSettings
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.errors import LisError
from lis.manifest import write_json
from lis.models.serve_plan import serving
from lis.runtime import agent_config, model_spec, MODELS_HINT, sandbox_config
from lis.sandbox import registry
from lis.tasks.io import read_tasks
from lis.util.log import console, setup_logging

log = logging.getLogger("lis.throughput")


def _csv(value: Optional[str]) -> Optional[list[str]]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def load_tasks(tasks_dir: Path, domains: list[str], n: int) -> list:
    """The first ``n`` tasks of ``tasks_dir/<domain>.jsonl`` for each domain (the file read as every
    stage reads a task set: :func:`lis.tasks.io.read_tasks`). Raises LisError naming a missing file or
    a line that is not a task."""

    out = []
    for d in domains:
        path = tasks_dir / f"{d}.jsonl"
        if not path.is_file():
            raise LisError(f"no task file {path}", f"run the tasks stage first (lis tasks --domain {d} --out {path})")
        got = read_tasks(path)[:n]
        if not got:
            raise LisError(f"task file {path} has no tasks", f"rebuild it with lis tasks --domain {d}")
        if len(got) < n:
            log.warning("%s has %d task(s), fewer than throughput.tasks=%d: using them all", path, len(got), n)
        out += got
    return out


def throughput(out: Path = typer.Option(Path(layout.THROUGHPUT), "--out", dir_okay=False, help="JSON to write."),
               model: Optional[str] = typer.Option(None, "--model", help="The models entry (endpoint) to measure."),
               domains: Optional[str] = typer.Option(None, "--domains", help="Comma-separated domains."),
               tasks: Optional[int] = typer.Option(None, "--tasks", min=1, max=100000, help="Tasks per domain (the first N)."),
               concurrency: Optional[int] = typer.Option(None, "--concurrency", min=1, max=4096, help="Episodes at once."),
               repeats: Optional[int] = typer.Option(None, "--repeats", min=1, max=1000, help="Timed runs per mode."),
               modes: Optional[str] = typer.Option(None, "--modes", help="Comma-separated modes (vanilla,sandbox)."),
               warm: Optional[int] = typer.Option(None, "--warm", min=0, max=1024, help="Sandboxes started before the clock starts."),
               warmup: Optional[int] = typer.Option(None, "--warmup", min=0, max=10000, help="Untimed episodes per mode first."),
               serve: Optional[str] = typer.Option(None, "--serve", help="http | direct (local models only)."),
               tasks_dir: Path = typer.Option(Path(layout.TASKS_DIR), "--tasks-dir", help="Where <domain>.jsonl are."),
               image_manifest: Optional[Path] = typer.Option(None, "--image-manifest",
                                                             help="The image stage's manifest (default: the params' tag)."),
               profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
               log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Run a fixed task list at a fixed concurrency in vanilla and in sandbox mode against ONE model
    endpoint, several times, and report queries per minute per mode (mean, n, 95% interval), their
    ratio and tokens per second. Settings: the params' `throughput` section, overridden by the
    options above; fresh episodes (no journal). Definitions: docs/efficiency.md."""

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    p = load_params(profile, params_file)
    section = p.data.get("throughput")
    if section is None:
        log.info("params have no `throughput` section: using the defaults (docs/efficiency.md) and the options")
    s = ThroughputSettings.from_params(section, model=model, domains=_csv(domains), tasks=tasks,
                                       concurrency=concurrency, repeats=repeats, modes=_csv(modes), warm=warm,
                                       warmup=warmup, serve=serve)
    spec = model_spec(p, s.model, hint=f"{MODELS_HINT}, or pick one with --model")
    task_list = load_tasks(tasks_dir, s.domains, s.tasks)
    sandbox_cfg = None
    if any(m != "vanilla" for m in s.modes):
        manifest = None
        if image_manifest is not None:
            try:
                manifest = json.loads(image_manifest.read_text())
            except (OSError, ValueError) as e:
                raise LisError(f"cannot read the image manifest {image_manifest}: {type(e).__name__}",
                               "run the image stage (lis image build) first") from None
        sandbox_cfg = sandbox_config(p, run_id=f"throughput-{registry.RUN_ID}", image_manifest=manifest)

    def cfg_for(domain: str, mode: str):
        return agent_config(p, spec=spec, domain=domain, sandbox=sandbox_cfg if mode != "vanilla" else None)

    with serving(p.section("models"), [s.model], p.root), \
            model_endpoint(s.model, spec, s.serve) as (chat_model, info):  # serve.auto: the server starts here
        with console.status("measuring throughput") as status:
            res = run_throughput(chat_model, task_list, s, cfg_for, sandbox_cfg,
                                 progress=lambda msg: status.update(f"throughput: {msg}"))
    res["model"] = info
    res["profile"] = p.profile
    write_json(out, res)
    log.info("wrote %s", out)
    typer.echo(json.dumps(res["summary"], indent=1))

"""The ``throughput`` stage: queries per minute, vanilla vs sandbox, against one model endpoint.

Definitions: docs/efficiency.md.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from lis.bench.throughput import model_endpoint, run_throughput
from lis.config.analysis import ThroughputSection
from lis.errors import LisError
from lis.manifest import write_json
from lis.models.serve_plan import serving
from lis.params import Params
from lis.runtime import agent_config, model_spec, model_specs, MODELS_HINT, sandbox_config
from lis.sandbox import registry
from lis.stages.spec import Option, Stage
from lis.tasks.io import read_tasks
from lis.util.log import console

STAGE = Stage(
    name="throughput",
    title="Queries per minute, vanilla vs sandbox",
    inputs="lis.pipeline.rule_inputs:throughput",
    cmd=("lis throughput --image-manifest data/image/manifest.json --tasks-dir data/tasks --out "
         "data/bench/throughput.json --profile ${profile} --log logs/bench/throughput.log"),
    params=("throughput", "models", "agent", "sandbox", "image"),
    deps=("data/tasks", "data/models/${throughput.model}", "data/image/manifest.json"),
    metrics=("data/bench/throughput.json",),
)

log = logging.getLogger("lis.throughput")

OPTIONS = (
    Option("--out", "JSON to write.", Path, Path("data/bench/throughput.json"), to="output", file=True),
    Option("--model", "The models entry (endpoint) to measure."),
    Option("--domains", "Comma-separated domains."),
    Option("--tasks", "Tasks per domain (the first N).", int, low=1, high=100000),
    Option("--concurrency", "Episodes at once.", int, low=1, high=4096),
    Option("--repeats", "Timed runs per mode.", int, low=1, high=1000),
    Option("--modes", "Comma-separated modes (vanilla,sandbox)."),
    Option("--warm", "Sandboxes started before the clock starts.", int, low=0, high=1024),
    Option("--warmup", "Untimed episodes per mode first.", int, low=0, high=10000),
    Option("--serve", "http | direct (local models only)."),
    Option("--image-manifest", "The image stage's manifest (default: the params' tag).", Path, to="input"),
)
HELP = {"tasks_dir": "Where <domain>.jsonl are."}


@dataclass(frozen=True)
class Settings:
    """One run of the stage (:func:`resolve`): the params (the ``models`` entry measured, ``agent``,
    ``sandbox``, ``image``) and the ``throughput`` section with the options applied."""

    params: Params
    throughput: ThroughputSection


def resolve(params: Params, **options: Any) -> Settings:
    """The settings from the params' ``throughput`` section (absent: the defaults) and the command
    line's options (keys of :class:`lis.config.analysis.ThroughputSection`; None: not given, one
    given wins). Raises ParamsError naming a bad key or value."""

    if params.data.get("throughput") is None:
        log.info("params have no `throughput` section: using the defaults (docs/efficiency.md) and the options")
    for key in ("domains", "modes"):  # comma-separated on the command line
        if isinstance(options.get(key), str):
            options[key] = [v.strip() for v in options[key].split(",") if v.strip()] or None
    return Settings(params=params, throughput=params.settings("throughput", **options))


def _load_tasks(tasks_dir: Path, domains: list[str], n: int) -> list:
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


def _image_manifest(path: Optional[Path]) -> Optional[dict[str, Any]]:
    """The image stage's manifest at ``path`` (None: none given). Raises LisError when it cannot be read."""

    if path is None:
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise LisError(f"cannot read the image manifest {path}: {type(e).__name__}",
                       "run the image stage (lis image build) first") from None


def run(settings: Settings, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict[str, Any]:
    """Run a fixed task list (the first ``tasks`` of ``inputs["tasks_dir"]/<domain>.jsonl`` per domain)
    at a fixed concurrency in each mode against one model endpoint, several times (a status line on a
    terminal); write the measurement to ``outputs["out"]`` and return it. ``inputs["image_manifest"]``:
    the image stage's manifest, read when a mode runs in a sandbox (absent: the tag the params give).
    Fresh episodes (no journal)."""

    p, s = settings.params, settings.throughput
    spec = model_spec(p, s.model, hint=f"{MODELS_HINT}, or pick one with --model")
    task_list = _load_tasks(inputs["tasks_dir"], s.domains, s.tasks)
    sandbox_cfg = None
    if any(m != "vanilla" for m in s.modes):
        manifest = _image_manifest(inputs.get("image_manifest"))
        sandbox_cfg = sandbox_config(p, run_id=f"throughput-{registry.RUN_ID}", image_manifest=manifest)

    def cfg_for(domain: str, mode: str):
        return agent_config(p, spec=spec, domain=domain, sandbox=sandbox_cfg if mode != "vanilla" else None)

    with serving(model_specs(p), [s.model], p.root), \
            model_endpoint(s.model, spec, s.serve) as (chat_model, info):  # serve.auto: the server starts here
        with console.status("measuring throughput") as status:
            res = run_throughput(chat_model, task_list, s, cfg_for, sandbox_cfg,
                                 progress=lambda msg: status.update(f"throughput: {msg}"))
    res["model"] = info
    res["profile"] = p.profile
    write_json(outputs["out"], res)
    log.info("wrote %s", outputs["out"])
    return res


def summary(result: dict[str, Any]) -> str:
    return json.dumps(result["summary"], indent=1)

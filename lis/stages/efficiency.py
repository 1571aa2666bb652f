"""The ``efficiency`` stage: prompt, model and environment tokens; environment time (Tables 10, 11;
docs/efficiency.md).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from lis.analysis.efficiency_tables import efficiency_report, load_episodes, write_episodes_csv
from lis.analysis.trajectories import jobs_paths
from lis.config.analysis import EfficiencySection
from lis.errors import LisError
from lis.manifest import write_json
from lis.params import Params
from lis.stages.spec import Option, Stage

STAGE = Stage(
    name="efficiency",
    title="Efficiency: prompt, model and environment tokens; environment time (Tables 10, 11)",
    inputs="lis.pipeline.rule_inputs:efficiency",
    cmd=("lis efficiency tokens --jobs --eval-root data/eval --out data/analysis/efficiency.json "
         "--episodes-csv data/analysis/efficiency_episodes.csv --profile ${profile} --log "
         "logs/analysis/efficiency.log"),
    params=("efficiency", "jobs"),
    deps=("data/eval",),
    outs=(
        "data/analysis/efficiency.json", "data/analysis/efficiency_episodes.csv",
        "data/analysis/efficiency_episodes.parquet",
    ),
)

log = logging.getLogger("lis.efficiency")
MODES = ("vanilla", "sandbox")
"""The modes whose jobs ``--jobs`` reads."""
ABOUT = """Tokens per episode split into prompt, model-generated and environment-generated (exact, from the usage the
server reported), vanilla vs sandbox per model and domain (Table 10), and the environment's share of tokens and of
time (Table 11): n and 95% intervals on every average. Reads exactly the files given (or the params' jobs with --jobs)."""
OPTIONS = (
    Option("", "trajectories.jsonl files of eval jobs (or the jobs' folders).", Path, many=True, to="input", name="trajectories"),
    Option("--jobs", "Read the trajectories of every job in the params' job lists (jobs.models x jobs.domains x "
           "vanilla/sandbox) under --eval-root.", bool, False),
    Option("--out", "JSON to write.", Path, Path("data/analysis/efficiency.json"), to="output", file=True),
    Option("--episodes-csv", "Also write one row per episode here.", Path, to="output", file=True),
    Option("--replicates", "Bootstrap replicates (default: efficiency.replicates, 2000).", int, low=100, high=1000000),
)
HELP = {"eval_root": "The eval jobs' outputs (--jobs)."}


def reads_params(explicit: bool, jobs: bool = False, replicates: Optional[int] = None) -> bool:
    """Params are read for the job lists, or for the replicates when none are given."""
    return jobs or replicates is None


@dataclass(frozen=True)
class Settings:
    """One run of the stage (:func:`resolve`): the ``efficiency`` section with the options applied, and
    the job lists ``--jobs`` reads. The data inputs are not here: they are ``inputs`` of :func:`run`."""

    efficiency: EfficiencySection
    jobs: bool = False
    """Also read every job of ``models`` × ``domains`` × vanilla/sandbox under ``inputs["eval_root"]``."""
    models: tuple[str, ...] = ()
    """The params' ``jobs.models`` (with ``jobs``)."""
    domains: tuple[str, ...] = ()
    """The params' ``jobs.domains`` (with ``jobs``)."""


def resolve(params: Optional[Params], *, jobs: bool = False, replicates: Optional[int] = None) -> Settings:
    """The settings from the command line's options and, where they leave something to them, the params
    (``params`` may be None when ``replicates`` is given and ``jobs`` is not): with ``jobs``, the params'
    job lists; ``replicates`` None: the params' ``efficiency.replicates``. Raises ParamsError naming a
    missing section or a bad key."""

    models: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    if jobs:
        j = params.settings("jobs")
        models, domains = tuple(j.models), tuple(j.domains)
    section = (params.settings("efficiency") if replicates is None
               else EfficiencySection.model_validate({"replicates": replicates}))
    return Settings(efficiency=section, jobs=jobs, models=models, domains=domains)


def run(settings: Settings, inputs: dict[str, Any], outputs: dict[str, Optional[Path]]) -> dict[str, Any]:
    """Tables 10 and 11 from the episodes of ``inputs["trajectories"]`` (trajectories.jsonl files of eval
    jobs, or the jobs' folders; with ``settings.jobs`` also every job's under ``inputs["eval_root"]``):
    write the report to ``outputs["out"]`` and, when given, one row per episode to
    ``outputs["episodes_csv"]`` (and .parquet beside it); return the report. Raises LisError when no
    trajectories are given, or named files hold no episode (without ``settings.jobs``)."""

    files = list(inputs.get("trajectories") or [])
    if settings.jobs:
        files += jobs_paths(inputs["eval_root"], settings.models, settings.domains, MODES)
    if not files:
        raise LisError("no trajectories given", "pass trajectories.jsonl files, or --jobs to read the params' jobs")
    read, episodes = load_episodes(files)
    if not episodes and not settings.jobs:
        raise LisError(f"no episodes in {', '.join(map(str, files))[:200]}",
                       "give trajectories.jsonl files of eval jobs that hold episodes")
    report = efficiency_report(episodes, read, b=settings.efficiency.replicates)
    write_json(outputs["out"], report)
    log.info("wrote %s (%d episodes from %d files, %d groups)", outputs["out"], len(episodes), len(files),
             len(report["groups"]))
    if outputs.get("episodes_csv") is not None:
        write_episodes_csv(outputs["episodes_csv"], episodes)
        log.info("wrote %s", outputs["episodes_csv"])
    return report


def summary(report: dict[str, Any]) -> str:
    """One line per model and domain: mean tokens per episode, vanilla and sandbox, and their ratio."""
    cell = lambda c: f"{c['total']['mean']} (n={c['total']['n']})" if c and c["total"]["mean"] is not None else "-"  # noqa: E731
    return "\n".join(f"{row['model']:<24} {row['domain']:<18} vanilla {cell(row.get('vanilla')):<22} "
                     f"sandbox {cell(row.get('sandbox')):<22} ratio {row['ratio']['value'] if row.get('ratio') else '-'}"
                     for row in report["table10"])

"""The ``behaviour`` stage: how models use the computer — external resources, files, computation, turns
(Figure 2, Tables 4, 8, 9; docs/behaviour.md).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import yaml

from lis.analysis.behaviour.aggregate import episode_rows
from lis.analysis.behaviour.inputs import jobs_paths, load_trajectories
from lis.analysis.behaviour.report import behaviour_report, write_csvs, write_turns
from lis.analysis.behaviour.rules import load_rules
from lis.analysis.behaviour.settings import validate_settings
from lis.config.analysis import BehaviourSection
from lis.errors import LisError
from lis.manifest import write_json
from lis.params import Params
from lis.stages.spec import Option, Stage
from lis.util.progress import at, Progress

STAGE = Stage(
    name="behaviour",
    title="Behaviour: external resources, files, computation, turns (Figure 2, Tables 4, 8, 9)",
    inputs="lis.pipeline.rule_inputs:behaviour",
    cmd=("lis behaviour analyse --jobs --eval-root data/eval --out data/analysis/behaviour.json "
         "--csv-dir data/analysis/behaviour --turns-out data/analysis/behaviour/turns.jsonl --profile "
         "${profile} --log logs/analysis/behaviour.log"),
    params=("behaviour", "jobs"),
    deps=("data/eval",),
    outs=(
        "data/analysis/behaviour.json", "data/analysis/behaviour/groups.csv",
        "data/analysis/behaviour/figure2_by_domain.csv", "data/analysis/behaviour/table4.csv",
        "data/analysis/behaviour/table8.csv", "data/analysis/behaviour/table9.csv",
        "data/analysis/behaviour/table9_pairs.csv", "data/analysis/behaviour/turns.jsonl",
        "data/analysis/behaviour/turns.parquet",
    ),
)

log = logging.getLogger("lis.behaviour")

ABOUT = """Classify every turn of the given episodes (external resources / file management / computation, by the rules
of patterns.yaml, following the scripts the model wrote and ran), and write usage rates and average turns per
model × domain × mode with 95% bootstrap intervals, Figure 2's data and Tables 4, 8 and 9. Reads exactly the files
given (plus the params' jobs with --jobs); params are read with --jobs, --profile, --params or --set."""
OPTIONS = (
    Option("", "trajectories.jsonl files or eval job folders (data/eval/<model>/<domain>/<mode>).", Path, many=True, to="input", name="trajectories"),
    Option("--jobs", "Also read every job of the params' job lists (jobs.models × jobs.domains × behaviour.modes) "
           "under --eval-root.", bool, False),
    Option("--out", "JSON to write.", Path, Path("data/analysis/behaviour.json"), to="output", file=True),
    Option("--csv-dir", "Also write the tables as CSV here.", Path, to="output"),
    Option("--turns-out", "Also write every turn's verdict and evidence (JSONL, and the same rows as .parquet "
           "beside it).", Path, to="output", file=True),
    Option("--settings", "YAML of the behaviour settings (default: the params section `behaviour` when params are "
           "read, else the defaults).", Path, name="settings_file"),
)
HELP = {"eval_root": "The eval jobs' outputs (--jobs)."}


def reads_params(explicit: bool, jobs: bool = False, **_) -> bool:
    """Params are read for the job lists, or when a profile, a params file or a --set names them."""
    return jobs or explicit


@dataclass(frozen=True)
class Settings:
    """One run of the stage (:func:`resolve`): the ``behaviour`` section, and the job lists ``--jobs``
    reads. The data inputs are not here: they are ``inputs`` of :func:`run`."""

    behaviour: BehaviourSection
    """The section: a settings file's keys, else the params' ``behaviour`` section, else the defaults."""
    jobs: bool = False
    """Also read every job of ``models`` × ``domains`` × ``behaviour.modes`` under ``inputs["eval_root"]``."""
    models: tuple[str, ...] = ()
    """The params' ``jobs.models`` (with ``jobs``)."""
    domains: tuple[str, ...] = ()
    """The params' ``jobs.domains`` (with ``jobs``)."""


def _settings_file(path: Path) -> dict[str, Any]:
    """The behaviour keys of a YAML file (its ``behaviour:`` mapping, or the whole file); one-line errors."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as e:
        raise LisError(f"behaviour settings file {path} cannot be read: {e.strerror or e}",
                       "give a YAML file of the behaviour keys") from None
    except yaml.YAMLError as e:
        raise LisError(f"behaviour settings file {path} is not valid YAML: "
                       f"{' '.join(str(e).split())[:160]}", "fix the file") from None
    if isinstance(data, dict) and isinstance(data.get("behaviour"), dict):
        data = data["behaviour"]
    if not isinstance(data, dict):
        raise LisError(f"behaviour settings file {path} is not a mapping", "give the behaviour keys")
    return data


def resolve(params: Optional[Params], settings_file: Optional[Path] = None, jobs: bool = False) -> Settings:
    """The settings from ``settings_file`` (a YAML file of the behaviour keys) when given, else the
    params' ``behaviour`` section (``params`` None or without one: the defaults); with ``jobs``, the
    params' job lists. Raises LisError naming a bad key or value."""

    if settings_file is not None:
        plain = validate_settings(_settings_file(settings_file), f"settings file {settings_file}")
    elif params is not None and isinstance(params.data.get("behaviour"), dict):
        plain = validate_settings(params.data["behaviour"], "params section")
    else:
        plain = validate_settings({})
    section = BehaviourSection.model_validate(plain)
    if not jobs:
        return Settings(behaviour=section)
    j = params.settings("jobs")
    return Settings(behaviour=section, jobs=True, models=tuple(j.models), domains=tuple(j.domains))


def run(settings: Settings, inputs: dict[str, Any], outputs: dict[str, Optional[Path]]) -> dict[str, Any]:
    """The report of ``ABOUT`` from the episodes of ``inputs["trajectories"]`` (with ``settings.jobs`` also
    every job's under ``inputs["eval_root"]``), written to ``outputs["out"]`` and returned; when given, its
    tables as CSV into ``outputs["csv_dir"]`` and every turn's verdict to ``outputs["turns_out"]`` (JSONL,
    and .parquet beside it). Raises LisError when no trajectories are given, or named files hold no
    episode (without ``settings.jobs``)."""

    s = validate_settings(settings.behaviour.model_dump())
    files = list(inputs.get("trajectories") or [])
    if settings.jobs:
        files += jobs_paths(inputs["eval_root"], settings.models, settings.domains, s["modes"])
    if not files:
        raise LisError("no trajectories given", "pass trajectories.jsonl files or job folders, or --jobs")
    read, records = load_trajectories(files)
    if not records and not settings.jobs:
        raise LisError(f"no episodes in {', '.join(map(str, files))[:200]}",
                       "give trajectories.jsonl files or eval job folders that hold episodes")
    turns_out, csv_dir = outputs.get("turns_out"), outputs.get("csv_dir")
    rules = load_rules()
    bar = Progress("behaviour", len(records))
    rows = []
    for r in records:
        rows += episode_rows([r], rules, s["include_reasoning"], keep_verdicts=turns_out is not None)
        bar.advance()
    bar.close()
    at("behaviour: rates and bootstrap intervals")
    report = behaviour_report(records, read, s, rules, rows)
    write_json(outputs["out"], report)
    log.info("wrote %s (%d episodes from %d files)", outputs["out"], len(records), len(files))
    if csv_dir is not None:
        for p in write_csvs(report, csv_dir):
            log.info("wrote %s", p)
    if turns_out is not None:
        for p in write_turns(rows, turns_out):
            log.info("wrote %s", p)
    return report


def summary(report: dict[str, Any]) -> str:
    """One line per group (episodes, turns, the three usage rates); a warning per table missing a group."""
    for row in report["table4"] + report["table8"]:
        if row.get("missing"):
            log.warning("%s: no episodes of %s in the inputs", row.get("group") or row.get("label"),
                        ", ".join(row["missing"]))
    lines = []
    for g in report["groups"]:
        u = g["usage"]
        cell = lambda c: "-" if u[c]["value"] is None else f"{100 * u[c]['value']:.1f}%"  # noqa: E731
        lines.append(f"{g['model']:<22} {g['domain']:<16} {g['mode']:<14} n={g['episodes']:<4} "
                     f"turns {g['avg_turns']['value']}  external {cell('external')}  file {cell('file')}  "
                     f"compute {cell('compute')}" + (f"  (excluded {g['excluded']})" if g["excluded"] else ""))
    return "\n".join(lines)

"""``lis efficiency``: what the sandbox costs — ``tokens``: tokens and time (Tables 10, 11) here;
``storage``: storage and memory (Table 12) in lis/cli/efficiency_storage.py (its own module, so that
each stage's code is its own analysis; both registered by lis/cli/__init__.py)."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.analysis.efficiency_tables import efficiency_report, load_episodes, write_episodes_csv
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.errors import LisError
from lis.manifest import write_json
from lis.util.log import setup_logging

log = logging.getLogger("lis.efficiency")
app = typer.Typer(help="Efficiency analyses (definitions: docs/efficiency.md).", no_args_is_help=True)


def _job_paths(eval_root: Path, p) -> list[Path]:
    """The trajectories of every job the params' job lists call for, in vanilla and sandbox mode."""
    jobs = p.section("jobs")
    return [eval_root / m / d / mode / "trajectories.jsonl"
            for m in jobs["models"] for d in jobs["domains"] for mode in ("vanilla", "sandbox")]


# `lis ... tokens`: a stage command, attached from its lis/stages declaration (lis.cli.GROUPS)
def tokens(paths: Optional[list[Path]] = typer.Argument(None, help="trajectories.jsonl files of eval jobs (or the jobs' folders)."),
           jobs: bool = typer.Option(False, "--jobs", help="Read the trajectories of every job in the params' "
                                     "job lists (jobs.models x jobs.domains x vanilla/sandbox) under --eval-root."),
           eval_root: Path = typer.Option(Path(layout.EVAL_ROOT), "--eval-root", help="The eval jobs' outputs (--jobs)."),
           out: Path = typer.Option(Path(layout.EFFICIENCY), "--out", dir_okay=False, help="JSON to write."),
           episodes_csv: Optional[Path] = typer.Option(None, "--episodes-csv", dir_okay=False,
                                                       help="Also write one row per episode here."),
           replicates: Optional[int] = typer.Option(None, "--replicates", max=1000000, min=100,
                                                    help="Bootstrap replicates (default: efficiency.replicates, 2000)."),
           profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
           log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Tokens per episode split into prompt, model-generated and environment-generated (exact, from
    the usage the server reported), vanilla vs sandbox per model and domain (Table 10), and the
    environment's share of tokens and of time (Table 11): n and 95% intervals on every average.
    Reads exactly the files given (or the params' jobs with --jobs)."""

    setup_logging(log_file, verbose)
    files = list(paths or [])
    if jobs or replicates is None:
        p = load_params(profile, params_file)
        if jobs:
            files += _job_paths(eval_root, p)
        if replicates is None:
            replicates = p.settings("efficiency").replicates
    if not files:
        raise LisError("no trajectories given", "pass trajectories.jsonl files, or --jobs to read the params' jobs")
    inputs, episodes = load_episodes(files)
    if not episodes and not jobs:
        raise LisError(f"no episodes in {', '.join(map(str, files))[:200]}",
                       "give trajectories.jsonl files of eval jobs that hold episodes")
    report = efficiency_report(episodes, inputs, b=replicates)
    write_json(out, report)
    log.info("wrote %s (%d episodes from %d files, %d groups)", out, len(episodes), len(files), len(report["groups"]))
    if episodes_csv is not None:
        write_episodes_csv(episodes_csv, episodes)
        log.info("wrote %s", episodes_csv)
    for row in report["table10"]:
        van, sbx, ratio = row.get("vanilla"), row.get("sandbox"), row.get("ratio")
        cell = lambda c: f"{c['total']['mean']} (n={c['total']['n']})" if c and c["total"]["mean"] is not None else "-"
        typer.echo(f"{row['model']:<24} {row['domain']:<18} vanilla {cell(van):<22} sandbox {cell(sbx):<22} "
                   f"ratio {ratio['value'] if ratio else '-'}")

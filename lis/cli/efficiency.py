"""``lis efficiency``: what the sandbox costs — ``tokens``: tokens and time (Tables 10, 11) here;
``storage``: storage and memory (Table 12) in lis/cli/efficiency_storage.py (its own module, so that
each stage's code is its own analysis; both registered by lis/cli/__init__.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.stages import efficiency as stage
from lis.util.log import setup_logging

app = typer.Typer(help="Efficiency analyses (definitions: docs/efficiency.md).", no_args_is_help=True)


# `lis ... tokens`: the command line of the `efficiency` stage (lis/stages/efficiency.py): its options, then the
# stage's `resolve` and `run`, then a summary on the terminal; attached from the declaration (lis.cli.GROUPS)
def tokens(paths: Optional[list[Path]] = typer.Argument(None, help="trajectories.jsonl files of eval jobs (or the jobs' folders)."),
           jobs: bool = typer.Option(False, "--jobs", help="Read the trajectories of every job in the params' "
                                     "job lists (jobs.models x jobs.domains x vanilla/sandbox) under --eval-root."),
           eval_root: Path = typer.Option(Path(layout.EVAL_ROOT), "--eval-root", help="The eval jobs' outputs (--jobs)."),
           out: Path = typer.Option(Path(layout.EFFICIENCY), "--out", dir_okay=False, help="JSON to write."),
           episodes_csv: Optional[Path] = typer.Option(None, "--episodes-csv", dir_okay=False,
                                                       help="Also write one row per episode here."),
           replicates: Optional[int] = typer.Option(None, "--replicates", max=1000000, min=100,
                                                    help="Bootstrap replicates (default: efficiency.replicates, 2000)."),
           profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile, sets: Optional[list[str]] = Sets,
           log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Tokens per episode split into prompt, model-generated and environment-generated (exact, from
    the usage the server reported), vanilla vs sandbox per model and domain (Table 10), and the
    environment's share of tokens and of time (Table 11): n and 95% intervals on every average.
    Reads exactly the files given (or the params' jobs with --jobs)."""

    setup_logging(log_file, verbose)
    params = load_params(profile, params_file, sets) if (jobs or replicates is None) else None
    settings = stage.resolve(params, jobs=jobs, replicates=replicates)
    report = stage.run(settings, {"trajectories": list(paths or []), "eval_root": eval_root},
                       {"out": out, "episodes_csv": episodes_csv})
    for row in report["table10"]:
        van, sbx, ratio = row.get("vanilla"), row.get("sandbox"), row.get("ratio")
        cell = lambda c: f"{c['total']['mean']} (n={c['total']['n']})" if c and c["total"]["mean"] is not None else "-"
        typer.echo(f"{row['model']:<24} {row['domain']:<18} vanilla {cell(van):<22} sandbox {cell(sbx):<22} "
                   f"ratio {ratio['value'] if ratio else '-'}")

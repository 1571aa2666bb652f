"""``lis view``: trajectories as static HTML pages that open from disk (no server, no network)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from lis.analysis.behaviour import classify_episode, load_rules
from lis.cli.options import LogFile, Verbose
from lis.errors import LisError
from lis.report.viewer import episode_ref, load, read_capabilities, render_site
from lis.util.log import setup_logging


def classified(records: list[dict]) -> dict[tuple[str, int], list[str]]:
    """Per-turn capabilities of the records by the behaviour analysis's classifier."""

    rules = load_rules()
    out: dict[tuple[str, int], list[str]] = {}
    for rec in records:
        for turn in classify_episode(rec, rules).per_turn:
            out[(episode_ref(rec), turn.step)] = list(turn.capabilities)
    return out


def view(inputs: List[Path] = typer.Argument(..., metavar="INPUT...",
                                             help="trajectories.jsonl files or eval job folders "
                                                  "(data/eval/<model>/<domain>/<mode>), given explicitly."),
         out: Path = typer.Option(Path("trajectory_view"), "--out", "-o",
                                  help="Folder to write index.html and the episode pages into (new, empty, "
                                       "or written by an earlier `lis view`)."),
         classify: bool = typer.Option(False, "--classify",
                                       help="Classify every turn's capability use (external / file / compute) "
                                            "with the behaviour analysis's rules: shown per turn, and a filter."),
         capabilities: Optional[Path] = typer.Option(
             None, "--capabilities",
             help="Per-turn capabilities from a file instead: the behaviour stage's "
                  'data/analysis/behaviour/turns.jsonl, or a JSONL of {"episode": "<model/domain/task#repeat@mode>", '
                  '"step": i, "capabilities": [...]}.'),
         title: str = typer.Option("Trajectories", "--title", help="Title of the index page."),
         log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Render episodes as index.html plus one page per episode: the task, every turn's reasoning,
    content, tool calls, observations, exit codes, tokens and times, the answer, the score and why
    it ended. The index is sortable and filterable by model, domain, mode, outcome (correct /
    partial / wrong / error) and, with --classify or --capabilities, capability used. Links are
    relative (copy the folder anywhere; it opens from disk); large observations are folded, never
    cut; everything from the records is escaped."""

    setup_logging(log_file, verbose)
    if classify and capabilities is not None:
        raise LisError("--classify and --capabilities both give the capabilities", "use one of them")
    loaded = load(inputs)
    for problem in loaded.problems:
        typer.echo(f"warning: {problem}", err=True)
    caps = read_capabilities(capabilities) if capabilities is not None else None
    if not loaded.records:
        raise LisError(f"no episodes in {', '.join(map(str, inputs))[:200]}",
                       "give trajectories.jsonl files, trajectory.json files or their folders")
    if classify:
        caps = classified(loaded.records)
    index = render_site(loaded, out, caps, title)
    typer.echo(str(index))

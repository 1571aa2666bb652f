"""``lis behaviour``: how models use the computer (Figure 2, Tables 4, 8, 9; docs/behaviour.md).

    lis behaviour analyse --jobs --profile smoke --out data/analysis/behaviour.json --csv-dir data/analysis/behaviour
    lis behaviour classify --format official output/            # per-episode counts (and --turns)
    lis behaviour rules [--update-doc docs/behaviour.md]        # the rules table (from patterns.yaml)
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from lis.analysis.behaviour.classify import classify_episode
from lis.analysis.behaviour.inputs import load_trajectories
from lis.analysis.behaviour.official import import_official, import_rl_jsonl
from lis.analysis.behaviour.rules import load_rules, render_rules_markdown
from lis.errors import LisError
from lis.util.jsonl import write_jsonl

app = typer.Typer(help="Behaviour analysis: capability usage per turn, reasoning patterns (docs/behaviour.md).",
                  no_args_is_help=True)
FORMATS = ("ours", "official", "rl")
BEGIN, END = "<!-- behaviour-rules:begin -->", "<!-- behaviour-rules:end -->"


def _records(paths: list[Path], fmt: str, model: Optional[str], domain: Optional[str], mode: Optional[str]):
    if fmt not in FORMATS:
        raise LisError(f"unknown --format {fmt!r}", f"one of {', '.join(FORMATS)}")
    if fmt == "official":
        return import_official(paths, model=model, domain=domain, mode=mode)
    if fmt == "rl":
        return import_rl_jsonl(paths, model=model, domain=domain, mode=mode)
    records = load_trajectories(paths)[1]
    if not records:
        raise LisError(f"no episodes in {', '.join(map(str, paths))[:200]}",
                       "give trajectories.jsonl files or eval job folders that hold episodes")
    return records


@app.command("classify")
def classify(paths: list[Path] = typer.Argument(..., help="Trajectory files or folders (see --format)."),
             fmt: str = typer.Option("ours", "--format", help="ours (trajectories.jsonl) | official (the authors' "
                                     "trajectory.json, files or folders) | rl (their chat_completions JSONL)."),
             turns: bool = typer.Option(False, "--turns", help="Also list every turn's capabilities and rules."),
             as_json: bool = typer.Option(False, "--json", help="Print JSON (per episode, with per-turn verdicts)."),
             model: Optional[str] = typer.Option(None, "--model"), domain: Optional[str] = typer.Option(None, "--domain"),
             mode: Optional[str] = typer.Option(None, "--mode")) -> None:
    """Per-episode verdicts: turns, and turns using each capability (for checking the rules by hand)."""

    rules = load_rules()
    caps = rules.capability_ids
    out = []
    if not as_json:
        typer.echo(f"{'episode':<36} {'turns':>5} " + " ".join(f"{c:>8}" for c in caps) + f" {'any':>5}")
    for rec in _records(paths, fmt, model, domain, mode):
        v = classify_episode(rec, rules)
        name = rec.task_id if not rec.domain else f"{rec.domain}/{rec.task_id}"
        counts = {c: v.turns_using(c) for c in caps}
        if as_json:
            out.append({"episode": name, "model": rec.model, "mode": rec.mode, "turns": v.turns, **counts,
                        "any": v.turns_using_any(), "per_turn": [t.to_dict() for t in v.per_turn]})
            continue
        typer.echo(f"{name[:36]:<36} {v.turns:>5} " + " ".join(f"{counts[c]:>8}" for c in caps) +
                   f" {v.turns_using_any():>5}")
        if turns:
            for t in v.per_turn:
                typer.echo(f"    step {t.step + 1:>3}: {','.join(t.capabilities) or '-':<22} {' '.join(t.rules)}"
                           + (f"  [ran {' '.join(t.followed)}]" if t.followed else ""))
    if as_json:
        typer.echo(json.dumps(out, indent=1, ensure_ascii=False))


@app.command("import")
def import_(paths: list[Path] = typer.Argument(..., help="The authors' trajectory.json files, run folders or the "
                                               "CLI's output/ folder (official); chat_completions JSONL (rl)."),
            fmt: str = typer.Option(..., "--format", help="official | rl"),
            out: Path = typer.Option(..., "--out", help="JSONL of our trajectory records to write."),
            model: Optional[str] = typer.Option(None, "--model", help="Model name for the records."),
            domain: Optional[str] = typer.Option(None, "--domain", help="Domain for the records."),
            mode: Optional[str] = typer.Option(None, "--mode", help="sandbox (default) or vanilla.")) -> None:
    """Turn the authors' trajectories into our trajectory records (then `lis behaviour analyse` them)."""

    if fmt not in ("official", "rl"):
        raise LisError(f"unknown --format {fmt!r} for import", "official or rl")
    records = _records(paths, fmt, model, domain, mode)

    write_jsonl(out, (r.to_dict() for r in records))
    typer.echo(f"wrote {out}: {len(records)} episode(s), {sum(len(r.steps) for r in records)} turns")


@app.command("rules")
def rules_cmd(update_doc: Optional[Path] = typer.Option(None, "--update-doc", help=f"Rewrite the table between "
                                                        f"{BEGIN} and {END} in this Markdown file.")) -> None:
    """The rules table (capability, rule, scope, pattern, source, example, near miss, note), from patterns.yaml."""

    table = render_rules_markdown(load_rules())
    if update_doc is None:
        typer.echo(table, nl=False)
        return
    try:
        text = update_doc.read_text(encoding="utf-8")
    except OSError as e:
        raise LisError(f"cannot read {update_doc}: {e.strerror or e}", "give docs/behaviour.md") from None
    if BEGIN not in text or END not in text:
        raise LisError(f"{update_doc} has no {BEGIN} … {END} block", "add the two marker lines where the table goes")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    update_doc.write_text(f"{head}{BEGIN}\n{table}{END}{tail}", encoding="utf-8")
    typer.echo(f"updated {update_doc}")

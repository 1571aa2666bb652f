"""``lis doctor``: what is available here, and whether the selected profile can run."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import ParamsFile, Profile, load_params
from lis.doctor import run_checks


def doctor(profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """Check the Docker engine, sandbox image, GPU, vLLM, HF hub and free disk.

    Exits 1 when something the profile needs (params: doctor.needs) is missing, and says how to fix it.
    """
    import platform

    from rich.console import Console
    from rich.table import Table

    p = load_params(profile, params_file)
    checks, needs = run_checks(p)
    table = Table(title=f"lis doctor — profile {p.profile} (Python {platform.python_version()})")
    for col in ("check", "status", "needed", "detail"):
        table.add_column(col)
    missing = []
    for c in checks:
        needed = c.name in needs
        status = "[green]ok[/]" if c.ok else ("[red]MISSING[/]" if needed else "[yellow]absent[/]")
        table.add_row(c.name, status, "yes" if needed else "no", c.detail)
        if needed and not c.ok:
            missing.append(c)
    Console().print(table)
    for c in missing:
        typer.echo(f"missing {c.name}: {c.detail} — fix: {c.hint}", err=True)
    if missing:
        raise typer.Exit(1)
    typer.echo(f"profile {p.profile}: everything it needs is here")

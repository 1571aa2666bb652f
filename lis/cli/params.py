"""``lis params``: validate and print the merged params."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
import yaml

from lis.cli.options import ParamsFile, Profile, load_params
from lis.config import render_yaml
from lis.errors import ParamsError
from lis.params import available_profiles, find_root, load, SCHEMA_FILE
from lis.params_source import lookup

app = typer.Typer(help="Validate and show the merged params (params.yaml + the profile overlay).", no_args_is_help=True)


@app.command("check")
def check(profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
          all_profiles: bool = typer.Option(False, "--all", help="Check every profile overlay.")) -> None:
    """Validate params.yaml and the overlay; exit 2 with one line naming the bad key."""

    p = load_params(profile, params_file)
    names = available_profiles(p.root) if all_profiles else [p.profile]
    for name in names:
        load(profile=name, params_file=p.root / "params.yaml")
        typer.echo(f"ok: profile {name}")


@app.command("show")
def show(key: Optional[str] = typer.Argument(None, help="Print only this section or key (dotted: "
                                                         "agent.episode_timeout_s) and which file set it."),
         profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """Print the merged params as YAML; with KEY, its effective value and the file that set it (an
    edit to params.yaml that the profile's overlay overrides shows here)."""
    p = load_params(profile, params_file)
    if not key:
        typer.echo(yaml.safe_dump(p.data, sort_keys=False).rstrip())
        return
    found = lookup(p, key)
    shown = found.value if isinstance(found.value, dict) else {key: found.value}  # a mapping: its keys, as before
    typer.echo(yaml.safe_dump(shown, sort_keys=False).rstrip())
    typer.echo(f"# profile {p.profile}: {found.note()}")


@app.command("schema")
def schema(write: bool = typer.Option(False, "--write", help="Write the schema file from the models."),
           check: bool = typer.Option(False, "--check", help="Exit 2 when the schema file is not the generated one."),
           file: Optional[Path] = typer.Option(None, "--file", help="The schema file (default: the repository's).")
           ) -> None:
    """Print the params' JSON schema generated from the section models in lis/config (or write or check the file)."""

    if file is not None and not (write or check):
        raise ParamsError(f"--file {file}: given without --write or --check", "add --check (compare) or --write (write)")
    text = render_yaml()
    path = file or find_root() / SCHEMA_FILE
    if write:
        path.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {path}")
    elif check:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            raise ParamsError(f"{path} is not the schema the models in lis/config generate",
                              "run `lis params schema --write` after editing lis/config")
        typer.echo(f"ok: {path} is up to date")
    else:
        typer.echo(text.rstrip())

"""``lis bench``: performance measured against a baseline in the same run."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import ParamsFile, Profile, load_params

app = typer.Typer(help="Benchmarks that print one JSON object, measured against a baseline in the same run.",
                  no_args_is_help=True)


@app.command("sandbox")
def sandbox(backend: Optional[str] = typer.Option(None, "--backend", help="docker or bwrap (default: params)."),
            n_echo: int = typer.Option(200, "--n-echo", help="Round trips measured."),
            concurrent: int = typer.Option(64, "--concurrent", help="Sandboxes at once."),
            commands: int = typer.Option(20, "--commands", help="Commands per concurrent sandbox."),
            warm: int = typer.Option(4, "--warm", help="Warm pool size for the acquire measurement."),
            out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON here."),
            profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """Round trip of `echo hi` through our execute_bash vs a raw exec_run on the same container;
    sandbox start; acquire from a warm pool; N concurrent sandboxes x M commands; idle memory."""
    from lis.sandbox import registry
    from lis.bench.sandbox import bench_sandbox
    from lis.sandbox.factory import config_from_params
    from lis.util.log import console

    registry.install_signal_handlers()
    p = load_params(profile, params_file)
    sec = p.section("sandbox")
    if backend:
        sec["backend"] = backend
    cfg = config_from_params(sec, p.section("image"), run_id=f"bench-{registry.RUN_ID}")
    with console.status("benchmarking") as status:
        res = bench_sandbox(cfg, n_echo=n_echo, concurrent=concurrent, commands=commands, warm=warm,
                            progress=lambda s: status.update(f"benchmarking: {s}"))
    text = json.dumps(res, indent=1)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    typer.echo(text)

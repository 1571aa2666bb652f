"""``lis bench memory``: memory of one sandbox, idle and busy, from its cgroup (Table 12; a stage).

Registered under ``lis bench`` by lis/cli/__init__.py; a module of its own so that the stage's code
is the memory measurement alone (lis pipeline check)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from lis.bench.memory import measure_memory
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.config.analysis import SandboxMemorySection
from lis.manifest import read_image_manifest, write_json
from lis.params import section_model
from lis.runtime import sandbox_config
from lis.sandbox import registry
from lis.util.log import console, setup_logging



def memory(backend: Optional[str] = typer.Option(None, "--backend", help="docker or bwrap (default: params)."),
           n: Optional[int] = typer.Option(None, "--n", max=1000, min=1,
                                           help="Fresh sandboxes, one at a time (default: sandbox_memory.n, 3)."),
           settle_s: Optional[float] = typer.Option(None, "--settle", max=3600.0, min=0.0,
                                                    help="Seconds an idle sandbox settles before it is read (2)."),
           interval_s: Optional[float] = typer.Option(None, "--interval", max=60.0, min=0.001,
                                                      help="Seconds between working-set samples (0.02)."),
           image_manifest: Optional[Path] = typer.Option(None, "--image-manifest",
                                                         help="The image stage's manifest (default: the params' tag)."),
           out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON here."),
           profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
           log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Memory of one sandbox, idle and busy (a numpy/scipy/sympy/pandas computation typical of the
    agent), read from its cgroup: idle and peak working set, the cgroup's high-water mark; mean, n
    and a 95% interval over --n sandboxes (Table 12; definitions in docs/efficiency.md)."""

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    p = load_params(profile, params_file)
    given = {"n": n, "settle_s": settle_s, "interval_s": interval_s}
    section = {**p.section("sandbox_memory"), **{k: v for k, v in given.items() if v is not None}}
    settings = section_model(SandboxMemorySection, section, "sandbox_memory", "params + options")
    manifest = None
    if image_manifest is not None:
        manifest = read_image_manifest(image_manifest)
    cfg = sandbox_config(p, run_id=f"bench-{registry.RUN_ID}", image_manifest=manifest, overrides={"backend": backend})
    with console.status("measuring memory") as status:
        res = measure_memory(cfg, n=settings.n, settle_s=float(settings.settle_s),
                             interval_s=float(settings.interval_s), progress=lambda s: status.update(f"measuring: {s}"))
    if out:
        write_json(out, res)
    typer.echo(json.dumps(res, indent=1))

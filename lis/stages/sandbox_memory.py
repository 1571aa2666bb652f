"""The ``sandbox_memory`` stage: memory of an idle and a busy sandbox, read from its cgroup (Table 12).
"""
from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path
from typing import Any, Optional

from lis.bench.memory import measure_memory
from lis.config.analysis import SandboxMemorySection
from lis.manifest import read_image_manifest, write_json
from lis.params import Params
from lis.runtime import sandbox_config
from lis.sandbox import registry
from lis.stages.spec import Option, Stage
from lis.util.log import console

STAGE = Stage(
    name="sandbox_memory",
    title="Memory of an idle and a busy sandbox",
    cmd=("lis bench memory --image-manifest data/image/manifest.json --out "
         "data/bench/sandbox_memory.json --profile ${profile} --log logs/bench/sandbox_memory.log"),
    params=("sandbox_memory", "sandbox", "image"),
    deps=("data/image/manifest.json",),
    metrics=("data/bench/sandbox_memory.json",),
)

OPTIONS = (
    Option("--backend", "docker or bwrap (default: params)."),
    Option("--n", "Fresh sandboxes, one at a time (default: sandbox_memory.n, 3).", int, low=1, high=1000),
    Option("--settle", "Seconds an idle sandbox settles before it is read (2).", float, name="settle_s", low=0.0, high=3600.0),
    Option("--interval", "Seconds between working-set samples (0.02).", float, name="interval_s", low=0.001, high=60.0),
    Option("--image-manifest", "The image stage's manifest (default: the params' tag).", Path, to="input"),
    Option("--out", "Also write the JSON here.", Path, to="output"),
)


@dataclass(frozen=True)
class Settings:
    """One run of the stage (:func:`resolve`): the params the sandbox is configured from (``sandbox``,
    ``image``), the ``sandbox_memory`` section with the options applied, and the backend asked for."""

    params: Params
    memory: SandboxMemorySection
    backend: Optional[str] = None
    """docker | bwrap; None: the params' ``sandbox.backend``."""


def resolve(params: Params, *, backend: Optional[str] = None, n: Optional[int] = None,
            settle_s: Optional[float] = None, interval_s: Optional[float] = None) -> Settings:
    """The settings from the params' ``sandbox_memory`` section and the command line's options (None:
    not given; one given wins). Raises ParamsError naming a bad key or value."""

    return Settings(params=params, memory=params.settings("sandbox_memory", n=n, settle_s=settle_s,
                                                          interval_s=interval_s), backend=backend)


def run(settings: Settings, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict[str, Any]:
    """Measure ``settings.memory.n`` fresh sandboxes, one at a time, idle and busy (a status line on a
    terminal); write the result to ``outputs["out"]`` when given and return it. ``inputs``:
    ``image_manifest``, the image stage's manifest (absent: the tag the params give)."""

    manifest = None
    if inputs.get("image_manifest") is not None:
        manifest = read_image_manifest(inputs["image_manifest"])
    cfg = sandbox_config(settings.params, run_id=f"bench-{registry.RUN_ID}", image_manifest=manifest,
                         overrides={"backend": settings.backend})
    s = settings.memory
    with console.status("measuring memory") as status:
        res = measure_memory(cfg, n=s.n, settle_s=float(s.settle_s), interval_s=float(s.interval_s),
                             progress=lambda msg: status.update(f"measuring: {msg}"))
    if outputs.get("out"):
        write_json(outputs["out"], res)
    return res


def summary(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=1)

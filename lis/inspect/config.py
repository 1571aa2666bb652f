"""The provider's configuration: a frozen pydantic model, every field optional (None: the value
``params.yaml`` gives), and how it becomes a :class:`lis.sandbox.base.SandboxConfig`."""
from __future__ import annotations

import copy
import dataclasses
import functools
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from lis.errors import LisError
from lis.params import OVERLAY_DIR, PARAMS_FILE, SCHEMA_FILE, find_root, load
from lis.runtime import sandbox_config as from_params
from lis.sandbox.base import Limits, SandboxConfig
from lis.util.quota import quota_problem

LIMIT_KEYS = tuple(f.name for f in dataclasses.fields(Limits))


class LisSandboxConfig(BaseModel):
    """``lis`` sandbox settings. None (the default) means: as ``params.yaml`` says (``sandbox``
    and ``image`` sections; ``params`` names which file, default lis's own)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Literal["docker", "bwrap"] | None = None  # sandbox.backend
    network: Literal["none", "bridge"] | None = None   # sandbox.network
    image: str | None = None         # Docker image tag (default: the image of params, built if missing)
    rootfs: str | None = None        # bubblewrap root filesystem folder (default: the image's)
    limits: dict[str, float] = {}    # over sandbox.limits: memory_mb, cpus, pids, testbed_mb, ...
    max_sandboxes: int | None = None  # sandbox.pool.max_concurrent
    warm: int | None = None          # sandbox.pool.warm: sandboxes started ahead of need
    params: str | None = None        # params.yaml to read (default: the lis checkout's)
    profile: str | None = None       # the params profile (default: the file's own `profile:`)

    @field_validator("limits")
    @classmethod
    def _known_limits(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(v) - set(LIMIT_KEYS))
        if unknown:
            raise ValueError(f"unknown limit(s) {', '.join(unknown)} (known: {', '.join(LIMIT_KEYS)})")
        return v

    def key(self) -> str:
        """A stable text for this configuration."""
        return self.model_dump_json()

    def __hash__(self) -> int:
        # Inspect puts a task's sandbox specs in a set: pydantic's frozen hash fails on the limits dict
        return hash(self.key())


def parse_config(config: Any) -> LisSandboxConfig:
    """The config Inspect hands over: None, our model, a dict, a YAML/JSON file name, or the
    shorthand ``docker`` / ``bwrap`` (``--sandbox lis:bwrap``). Raises LisError."""
    if config is None:
        return LisSandboxConfig()
    if isinstance(config, LisSandboxConfig):
        return config
    if isinstance(config, BaseModel):
        config = config.model_dump()
    if isinstance(config, str):
        path = Path(config)
        if not path.is_file() and path.name in ("docker", "bwrap"):  # Inspect made it relative to the task's folder
            return LisSandboxConfig(backend=path.name)  # type: ignore[arg-type]
        if not path.is_file():
            raise LisError(f"lis sandbox config {config!r} is neither docker, bwrap nor a file",
                           "give --sandbox lis, lis:docker, lis:bwrap or lis:<config.yaml>")
        import yaml

        try:
            config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
            raise LisError(f"cannot read lis sandbox config {path} ({' '.join(str(e).split())[:200]})",
                           "give a YAML or JSON mapping of LisSandboxConfig fields") from None
    if not isinstance(config, dict):
        raise LisError(f"lis sandbox config: expected a mapping, got {type(config).__name__}",
                       "give a YAML or JSON mapping of LisSandboxConfig fields")
    try:
        return LisSandboxConfig(**config)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(config)"
        raise LisError(f"lis sandbox config: {where}: {first.get('msg')}",
                       f"fields: {', '.join(LisSandboxConfig.model_fields)}") from None


def params_root(cfg: LisSandboxConfig) -> Path:
    """Where params.yaml is: the config's ``params``, else the lis checkout this package runs from,
    else the nearest one at or above the working directory."""
    if cfg.params:
        p = Path(cfg.params)
        if p.is_dir():
            p = p / PARAMS_FILE
        if not p.is_file():
            raise LisError(f"lis sandbox config: params {cfg.params} does not exist", "name a params.yaml")
        return p.resolve().parent
    here = Path(__file__).resolve().parents[2]
    if (here / PARAMS_FILE).is_file():
        return here
    return find_root(".")


def load_params(cfg: LisSandboxConfig):
    """The params ``cfg`` names (file and profile), read once per process while the files are unchanged:
    Inspect asks for them at every task start, pool and concurrency check (a read parses the schema)."""
    root = params_root(cfg)
    stamps = tuple(p.stat().st_mtime_ns if p.exists() else 0
                   for p in (root / PARAMS_FILE, root / SCHEMA_FILE, *sorted((root / OVERLAY_DIR).glob("*.yaml"))))
    return copy.deepcopy(_load(str(root), cfg.profile, stamps))


@functools.lru_cache(maxsize=16)
def _load(root: str, profile: str | None, stamps: tuple):
    return load(Path(root), profile=profile)


def sandbox_config(cfg: LisSandboxConfig, run_id: str, image_facts: dict | None = None) -> tuple[SandboxConfig, dict]:
    """(the SandboxConfig of ``cfg`` over params, the params' pool settings). ``image_facts``: what
    :func:`lis.sandbox.image.ensure_image` returned (task_init), else the tag the params give."""
    params = load_params(cfg)
    section = params.settings("sandbox").written()
    limits = {**section.get("limits", {}), **{k: (float(v) if k == "cpus" else int(v)) for k, v in cfg.limits.items()}}
    problem = quota_problem(limits)
    if problem:
        raise LisError(f"lis sandbox config: limits: {problem}", "lower the quotas or raise limits.memory_mb")
    manifest = {"image": image_facts} if image_facts and image_facts.get("tag") else None
    sc = from_params(params, run_id=run_id, image_manifest=manifest, backend=cfg.backend,
                     overrides={"limits": limits, "network": cfg.network})
    if cfg.image:
        sc = dataclasses.replace(sc, image=cfg.image)
    if cfg.rootfs:
        sc = dataclasses.replace(sc, rootfs=cfg.rootfs)
    elif sc.backend == "bwrap" and image_facts and image_facts.get("rootfs"):
        sc = dataclasses.replace(sc, rootfs=image_facts["rootfs"])
    pool = dict(section.get("pool", {}))
    if cfg.max_sandboxes is not None:
        pool["max_concurrent"] = cfg.max_sandboxes
    if cfg.warm is not None:
        pool["warm"] = cfg.warm
    return sc, pool

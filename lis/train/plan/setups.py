"""Where a run's state lives: processes, sharding and offload, read from an accelerate config or its launch env.

    setup = read_accelerate("workflow/accelerate/fsdp_offload.yaml", gpu_memory_gb=80)
    setup = from_env(os.environ, capacity_gb=..., device="cuda")   # inside a run `accelerate launch` started
    paper, single = default_setups(root)                            # the two setups `lis train plan` shows

A setup says, per kind of state (weights, gradients, optimizer state), whether each process holds
all of it or a 1/N shard, and whether it sits on the GPU or in CPU memory:

==================  =========  ===========  ==========  ======================================
distributed         weights    gradients    optimizer   offload
==================  =========  ===========  ==========  ======================================
single / DDP        whole      whole        whole       none
FSDP FULL_SHARD     1/N        1/N          1/N         fsdp_offload_params: all three to CPU
DeepSpeed ZeRO-2    whole      1/N          1/N         offload_optimizer_device: optimizer
DeepSpeed ZeRO-3    1/N        1/N          1/N         + offload_param_device: weights
==================  =========  ===========  ==========  ======================================
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from lis.errors import LisError

ACCELERATE_DIR = Path("workflow/accelerate")
PAPER_CONFIG = ACCELERATE_DIR / "fsdp_offload.yaml"          # the authors' setup: 1 node x 8 GPUs
SINGLE_CONFIG = ACCELERATE_DIR / "deepspeed_zero3_offload.yaml"  # full fine-tuning on one GPU
DEFAULT_GPU_GB = 80.0


@dataclass(frozen=True)
class Setup:
    """How the processes of a run hold the model (see the module doc); sizes in GB (10^9 bytes)."""

    name: str
    processes: int = 1
    distributed: str = "single"        # single | ddp | fsdp | deepspeed
    zero_stage: int = 0                # deepspeed: 2 | 3 (fsdp FULL_SHARD counts as 3, SHARD_GRAD_OP as 2)
    offload_params: bool = False
    offload_optimizer: bool = False
    mixed_precision: str = "no"        # the accelerate config's: no | bf16 | fp16
    device: str = "cuda"               # cuda | cpu (the CPU: everything in host memory, nothing offloaded)
    capacity_gb: float = DEFAULT_GPU_GB  # memory per process's device
    cpu_capacity_gb: float | None = None  # host memory of the node (None: not judged)
    source: str = ""                   # the config file, or "environment"

    @property
    def shards_params(self) -> bool:
        return self.zero_stage >= 3

    @property
    def shards_grads(self) -> bool:
        return self.zero_stage >= 2

    @property
    def shards_optimizer(self) -> bool:
        return self.zero_stage >= 1

    def describe(self) -> str:
        if self.distributed == "fsdp":
            how = f"FSDP {'FULL_SHARD' if self.zero_stage >= 3 else 'SHARD_GRAD_OP'}"
        elif self.distributed == "deepspeed":
            how = f"DeepSpeed ZeRO-{self.zero_stage}"
        else:
            how = "DDP" if self.processes > 1 else "one process"
        off = [w for w, on in (("params", self.offload_params), ("optimizer", self.offload_optimizer)) if on]
        where = f", {' + '.join(off)} offloaded to CPU" if off and self.device == "cuda" else ""
        dev = f"{self.processes} x {gb_text(self.capacity_gb)} GB {'GPU' if self.device == 'cuda' else 'host memory'}"
        return f"{dev}, {how}{where}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def gb_text(x: float) -> str:
    """A capacity in GB as people write it: 80, 25.3."""
    return f"{x:,.0f}" if abs(x - round(x)) < 0.05 else f"{x:,.1f}"


def _flag(v: Any) -> bool:
    return str(v).strip().lower() in ("1", "true", "yes", "on")


def _fsdp_stage(strategy: Any) -> int:
    """The ZeRO stage an FSDP sharding strategy (its name or accelerate's number) amounts to."""
    return {"SHARD_GRAD_OP": 2, "2": 2, "_HYBRID_SHARD_ZERO2": 2, "5": 2, "NO_SHARD": 0, "3": 0}.get(
        str(strategy).upper(), 3)


def _offloaded(device: Any) -> bool:
    return str(device).lower() in ("cpu", "nvme")


def read_accelerate(path: str | Path, *, gpus: int | None = None, gpu_memory_gb: float | None = None,
                    cpu_memory_gb: float | None = None, name: str | None = None) -> Setup:
    """The setup of an accelerate config file (``workflow/accelerate/*.yaml``); ``gpus`` overrides its
    num_processes. Raises LisError when the file is missing, not YAML, or of a kind not planned
    (TPU, Megatron, multi-node)."""
    import yaml

    p = Path(path)
    try:
        cfg = yaml.safe_load(p.read_text())
    except OSError:
        raise LisError(f"no accelerate config at {p}", f"give one of {ACCELERATE_DIR}/*.yaml") from None
    except UnicodeDecodeError:
        raise LisError(f"{p} is not text: not an accelerate config", f"give one of {ACCELERATE_DIR}/*.yaml") from None
    except yaml.YAMLError as e:
        raise LisError(f"{p} is not valid YAML ({getattr(e, 'problem', e)})", "fix the file") from None
    if not isinstance(cfg, dict) or "distributed_type" not in cfg:
        raise LisError(f"{p} has no distributed_type: not an accelerate config", f"give one of {ACCELERATE_DIR}/*.yaml")
    if int(cfg.get("num_machines", 1) or 1) != 1:
        raise LisError(f"{p}: num_machines {cfg.get('num_machines')}: lis train plan plans one node",
                       "plan one machine's processes (--gpus)")
    kind = str(cfg["distributed_type"]).upper()
    n = int(gpus or cfg.get("num_processes") or 1)
    mp = str(cfg.get("mixed_precision") or "no").lower()
    common = dict(name=name or p.stem, processes=n, mixed_precision=mp, capacity_gb=gpu_memory_gb or DEFAULT_GPU_GB,
                  cpu_capacity_gb=cpu_memory_gb, source=str(path))
    if kind in ("NO", "MULTI_GPU", "MULTI_CPU"):
        return Setup(distributed="ddp" if n > 1 else "single", **common)
    if kind == "FSDP":
        f = cfg.get("fsdp_config") or {}
        off = _flag(f.get("fsdp_offload_params", False))
        return Setup(distributed="fsdp", zero_stage=_fsdp_stage(f.get("fsdp_sharding_strategy", "FULL_SHARD")),
                     offload_params=off, offload_optimizer=off, **common)
    if kind == "DEEPSPEED":
        d = cfg.get("deepspeed_config") or {}
        if d.get("deepspeed_config_file"):
            raise LisError(f"{p} points at a DeepSpeed JSON ({d['deepspeed_config_file']}): not read here",
                           "give the ZeRO stage and offload devices in the accelerate config itself")
        return Setup(distributed="deepspeed", zero_stage=int(d.get("zero_stage", 2)),
                     offload_params=_offloaded(d.get("offload_param_device", "none")),
                     offload_optimizer=_offloaded(d.get("offload_optimizer_device", "none")), **common)
    raise LisError(f"{p}: distributed_type {kind} is not planned",
                   "use a single-process, DDP, FSDP or DeepSpeed config")


def plain(gpus: int = 1, *, gpu_memory_gb: float | None = None, cpu_memory_gb: float | None = None) -> Setup:
    """No accelerate config: one process (or DDP over ``gpus``), everything on each GPU."""
    return Setup(name="plain" if gpus == 1 else "ddp", processes=gpus, distributed="ddp" if gpus > 1 else "single",
                 capacity_gb=gpu_memory_gb or DEFAULT_GPU_GB, cpu_capacity_gb=cpu_memory_gb, source="none")


def from_env(env: Mapping[str, str], *, capacity_gb: float, device: str,
             cpu_capacity_gb: float | None = None) -> Setup:
    """The setup ``accelerate launch`` told this process through its environment (WORLD_SIZE and the
    ACCELERATE_* / FSDP_* variables); without them one process, or DDP when WORLD_SIZE > 1."""
    n = int(env.get("WORLD_SIZE") or 1)
    mp = str(env.get("ACCELERATE_MIXED_PRECISION") or "no").lower()
    common = dict(processes=n, mixed_precision=mp, device=device, capacity_gb=capacity_gb,
                  cpu_capacity_gb=cpu_capacity_gb, source="environment")
    if _flag(env.get("ACCELERATE_USE_FSDP", "")):
        off = _flag(env.get("FSDP_OFFLOAD_PARAMS", "false"))
        stage = _fsdp_stage(env.get("FSDP_SHARDING_STRATEGY", "FULL_SHARD"))
        return Setup(name="fsdp", distributed="fsdp", zero_stage=stage, offload_params=off, offload_optimizer=off,
                     **common)
    if _flag(env.get("ACCELERATE_USE_DEEPSPEED", "")):
        return Setup(name="deepspeed", distributed="deepspeed",
                     zero_stage=int(env.get("ACCELERATE_DEEPSPEED_ZERO_STAGE") or 2),
                     offload_params=_offloaded(env.get("ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE", "none")),
                     offload_optimizer=_offloaded(env.get("ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE", "none")),
                     **common)
    return Setup(name="ddp" if n > 1 else "plain", distributed="ddp" if n > 1 else "single", **common)


def default_setups(root: Path, *, cpu_memory_gb: float | None = None) -> list[Setup]:
    """The two setups ``lis train plan`` shows without setup options: the paper's (8 x 80 GB GPUs, FSDP
    with parameters and optimizer offloaded) and one 80 GB GPU (DeepSpeed ZeRO-3 offload, 1 process)."""
    paper = read_accelerate(root / PAPER_CONFIG, gpus=8, gpu_memory_gb=DEFAULT_GPU_GB, cpu_memory_gb=cpu_memory_gb,
                            name="paper: 8 x 80 GB, fsdp_offload")
    single = read_accelerate(root / SINGLE_CONFIG, gpus=1, gpu_memory_gb=DEFAULT_GPU_GB, cpu_memory_gb=cpu_memory_gb,
                             name="1 x 80 GB, deepspeed_zero3_offload")
    return [replace(paper, source=str(PAPER_CONFIG)), replace(single, source=str(SINGLE_CONFIG))]

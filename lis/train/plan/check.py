"""Plans of the stages for a profile, the refusal of one that cannot fit, and the check a run makes at its start.

    plans = plan_stages(params, ["grpo", "sft"], setups, model=None)   # {stage: [Plan per setup]}
    metrics["memory_plan"] = check_run(grpo, "grpo", init_dir)          # at a stage's start: raises if it cannot fit
"""
from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

from lis.config.training import GrpoSection, SftSection
from lis.errors import LisError
from lis.train.plan.vllm_server import server_lines
from lis.train.plan.memory import GB, Plan, estimate, workload
from lis.train.plan.setups import Setup, from_env, gb_text
from lis.train.plan.shapes import ModelShape, read_shape, resolve_model
from lis.train.plan.table import render

log = logging.getLogger("lis.train.plan")
STAGES = ("grpo", "sft")


def stage_setup(stage: str, setup: Setup, sec: GrpoSection | SftSection) -> Setup:
    """The setup a stage really runs under: GRPO (TRL, accelerate) under ``setup`` as given; SFT under
    Lightning, which reads no accelerate config: ``sft.devices`` processes (DDP when more than one), no
    sharding, no offload, on the same devices."""
    if stage != "sft":
        return setup
    n = sec.devices
    return replace(setup, name=f"{setup.name} (sft: Lightning, {n} process{'es' if n > 1 else ''})", processes=n,
                   distributed="ddp" if n > 1 else "single", zero_stage=0, offload_params=False,
                   offload_optimizer=False)


def plan_stage(shape: ModelShape, stage: str, sec: GrpoSection | SftSection, setup: Setup) -> Plan:
    """The plan of one stage (its validated params section ``sec``) for ``shape`` under ``setup``."""
    st = stage_setup(stage, setup, sec)
    w = workload(stage, sec, cuda=st.device == "cuda", processes=st.processes)
    if stage == "grpo":
        w.notes += server_lines(shape, sec)
    return estimate(shape, w, st)


def plan_stages(params: Any, stages: list[str], setups: list[Setup], model: str | None = None
                ) -> tuple[ModelShape, str, dict[str, list[Plan]]]:
    """Every stage's plan under every setup: (shape, where the shape came from, {stage: [plans]}).
    Raises LisError when the model's shape cannot be found."""
    out: dict[str, list[Plan]] = {}
    shape = source = None
    for stage in stages:
        shape, source = resolve_model(params, stage, model)
        out[stage] = [plan_stage(shape, stage, params.settings(stage), st) for st in setups]
    return shape, source, out


def refusal(plan: Plan) -> LisError:
    """The one-line error of a plan that cannot fit: what it needs, where, its largest term and the knob."""
    t = plan.largest()
    st = plan.setup
    where = "GPU" if st.device == "cuda" else "process"
    if not plan.fits_gpu:
        msg = (f"{plan.stage} cannot fit: {plan.peak_gb:,.1f} GB per {where} at its "
               f"{'forward/backward' if plan.peak_phase == 'train' else plan.peak_phase} peak, over the "
               f"{gb_text(st.capacity_gb)} GB of {st.describe()}; the largest term is {t.label.strip()} "
               f"({t.gpu / GB:,.1f} GB)")
    else:
        msg = (f"{plan.stage} cannot fit: {plan.cpu_gb:,.1f} GB of CPU memory for the offloaded state, over the "
               f"node's {gb_text(st.cpu_capacity_gb)} GB; the largest term is {t.label.strip()} ({t.cpu / GB:,.1f} GB)")
    return LisError(msg, f"shrink it: {t.knob}" if t.knob else "use larger or more devices")


def _meminfo_gb(key: str = "MemTotal") -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024 / GB
    except OSError:
        pass
    return float("inf")


def device_capacity(env: Mapping[str, str]) -> tuple[str, float, float]:
    """(device, GB per process, GB of host memory) here: the CUDA device's total memory (LOCAL_RANK's), or
    the host's memory (/proc/meminfo MemTotal) shared by the LOCAL_WORLD_SIZE processes on this host."""
    host = _meminfo_gb()
    import torch

    if torch.cuda.is_available():
        idx = int(env.get("LOCAL_RANK") or 0) % max(1, torch.cuda.device_count())
        return "cuda", torch.cuda.get_device_properties(idx).total_memory / GB, host
    local = max(1, int(env.get("LOCAL_WORLD_SIZE") or env.get("WORLD_SIZE") or 1))
    return "cpu", host / local, host


def check_run(sec: GrpoSection | SftSection, stage: str, init_dir: Path, *,
              env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The memory plan of THIS run at a stage's start, from shapes alone, under the setup ``accelerate
    launch`` put in ``env``: logs the table and returns :meth:`Plan.as_dict`. Raises LisError (the largest
    term and its knob) when the run cannot fit or ``init_dir`` holds no Qwen3 config.json."""
    if stage not in STAGES:
        raise LisError(f"unknown stage {stage!r} for a memory plan", "use grpo or sft")
    env = os.environ if env is None else env
    shape = read_shape(init_dir)
    device, capacity, host = device_capacity(env)
    setup = from_env(env, capacity_gb=capacity, device=device, cpu_capacity_gb=host if device == "cuda" else None)
    setup = replace(setup, name=f"this run ({setup.name})")
    plan = plan_stage(shape, stage, sec, setup)
    log.info("memory plan of this run:\n%s", render([plan]))
    if not plan.fits:
        raise refusal(plan)
    return plan.as_dict()

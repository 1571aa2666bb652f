"""What a vLLM server needs for GRPO's server mode (``grpo.vllm.mode: server``): lines under the plan.

The server runs on GPUs of its own; vLLM takes ``--gpu-memory-utilization`` of each, holds the weights in
the served dtype and gives the rest to its paged KV cache, preempting requests that do not fit.
"""
from __future__ import annotations

import shlex

from lis.config.training import GrpoSection
from lis.train.plan.memory import GB
from lis.train.plan.shapes import ModelShape


def _flag(command: list[str], name: str) -> str | None:
    for i, a in enumerate(command):
        if a == name and i + 1 < len(command):
            return str(command[i + 1])
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def server_lines(shape: ModelShape, sec: GrpoSection) -> list[str]:
    """The vLLM server's memory and the weight sync's traffic, as plan lines (none in mode none)."""
    v = sec.vllm
    if v is None or v.mode != "server":
        return []
    command = [str(c) for c in v.command] if isinstance(v.command, list) else shlex.split(v.command or "")
    dtype = _flag(command, "--dtype") or "bfloat16"
    b = 4 if dtype in ("float32", "float") else 2
    util = float(_flag(command, "--gpu-memory-utilization") or 0.9)
    tp = int(_flag(command, "--tensor-parallel-size") or 1)
    gpus = str(v.env.get("CUDA_VISIBLE_DEVICES", "?"))
    prompt, episode, group = sec.max_prompt_tokens, sec.max_episode_tokens, sec.group_batch
    per_token = shape.kv_bytes_per_position(b)
    full = (prompt + episode) * per_token
    weights = shape.params * b
    lines = [f"vLLM server (GPUs {gpus}, tensor parallel {tp}, {dtype}): weights {weights / GB:,.1f} GB "
             f"({weights / tp / GB:,.1f} GB per GPU); KV cache {per_token / 1024:,.0f} KiB per token: one episode at "
             f"full length ({prompt + episode:,} tokens) {full / GB:,.1f} GB, the step's {group} at once "
             f"{group * full / GB:,.0f} GB; vLLM gives the KV cache what {util:g} of each GPU leaves after the "
             f"weights and preempts (recomputes) what does not fit"]
    if v.sync == "files":
        lines.append(f"weight sync (files): {shape.params * 2 / GB:,.1f} GB (bf16) or {shape.params * 4 / GB:,.1f} GB "
                     "(fp32) written and reloaded before each step, on a disk both see")
    else:
        lines.append(f"weight sync (trl): {shape.params * b / GB:,.1f} GB broadcast over NCCL before each step")
    return lines

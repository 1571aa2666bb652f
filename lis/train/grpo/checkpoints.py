"""The GRPO checkpoint policy (params ``grpo.checkpoints``): what a checkpoint holds, and room for it.

    need = checkpoint_bytes(model, optimizer=True)
    require_disk(folder, need, step=10)      # LisError (one line) when the disk cannot take it

A checkpoint holds the trainable weights as saved (the whole model; with LoRA, the adapters only)
and, with ``optimizer: true``, AdamW's two fp32 moments per trainable parameter (exact resume);
``optimizer: false`` keeps weights only (a resume restarts AdamW's moments). The newest of ``keep`` is
written before the oldest is deleted. The free disk is checked before every save, so a run stops with
a one-line error instead of dying with a half-written checkpoint (it resumes from the last one).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.train.disk import MARGIN_BYTES, free_bytes, tensor_bytes
from lis.train.lora import is_lora


def checkpoint_bytes(model: Any, *, optimizer: bool) -> int:
    """Bytes one checkpoint of ``model`` takes (see the module doc)."""
    params = list(model.parameters())
    trainable = [p for p in params if p.requires_grad]
    saved = trainable if is_lora(model) else params
    size = tensor_bytes(saved)
    if optimizer:
        size += sum(2 * 4 * p.numel() for p in trainable)
    return size + MARGIN_BYTES


def require_disk(folder: str | Path, need: int, *, step: int, keep: int) -> None:
    """Raise LisError when ``folder``'s filesystem has less free space than one checkpoint needs."""
    free = free_bytes(folder)
    if free < need:
        raise LisError(f"grpo: no room for checkpoint {step}: it needs {need / 2**30:.1f} GB, {free / 2**30:.1f} GB "
                       f"are free in {folder} (the earlier checkpoints are kept; the run resumes from the last)",
                       f"free disk space, or set grpo.checkpoints.optimizer: false (weights only) or "
                       f"grpo.checkpoints.keep below {keep}")


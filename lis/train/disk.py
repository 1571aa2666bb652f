"""Room on disk for what training writes: one check before a trained model is written, so a full disk
ends a run in one line instead of mid-write (the run's checkpoints stay; a re-run resumes and writes).

    require_model_room(out_dir, model, "grpo")
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from lis.errors import LisError

MARGIN_BYTES = 256 << 20   # trainer state, RNG states, the tokenizer and filesystem slack


def tensor_bytes(params: Any) -> int:
    """Bytes of ``params`` as stored (their own dtypes)."""
    return sum(p.numel() * p.element_size() for p in params)


def free_bytes(folder: str | Path) -> int:
    """Free bytes on ``folder``'s filesystem (the folder is made first)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return shutil.disk_usage(folder).free


def require_model_room(folder: str | Path, model: Any, stage: str) -> None:
    """Raise LisError when ``folder``'s filesystem cannot take ``model`` (all its weights as saved)."""
    need = tensor_bytes(model.parameters()) + MARGIN_BYTES
    free = free_bytes(folder)
    if free < need:
        raise LisError(f"{stage}: no room for the trained model: it needs {need / 2**30:.1f} GB, {free / 2**30:.1f} GB "
                       f"are free in {folder} (the last checkpoint is kept; a re-run resumes from it and writes the "
                       f"model)", "free disk space, or write the stage's output on a larger disk")

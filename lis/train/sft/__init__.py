"""Supervised fine-tuning (PyTorch Lightning) on successful trajectories, assistant tokens only.

    train_sft(base_dir, records, out_dir, params.settings("sft"))     # lis train sft (the `sft` stage)

Lightning loads only when training runs (``train_sft`` is imported lazily).
"""
from __future__ import annotations

from typing import Any

from lis.train.sft.data import NO_LOSS, Example, encode, examples_from_records, record_episode

__all__ = ["NO_LOSS", "Example", "encode", "examples_from_records", "record_episode", "train_sft"]


def __getattr__(name: str) -> Any:
    if name == "train_sft":
        from lis.train.sft import run  # lazy: documented lazy re-export (the package loads run on first use)

        return getattr(run, name)
    raise AttributeError(f"module 'lis.train.sft' has no attribute {name!r}")

"""Precision and memory knobs of the trainers (params ``grpo.precision`` / ``sft.precision``).

    p = resolve_precision({"bf16": "auto", "gradient_checkpointing": "auto"})   # Precision(bf16=..., ...)

``auto`` turns a knob on where it pays: on CUDA. **bf16** is mixed precision: the weights, their
gradients and AdamW's moments stay fp32 (master weights), the matrix products run in bf16 under
autocast. Pure bf16 weights are not offered for full fine-tuning: at the paper's learning rate
(1e-6) an update is ~1e-6 of a weight, far below bf16's resolution (2^-8 relative), so most
updates would round away. With LoRA the frozen base is held in bf16 (it is never updated) and the
adapters in fp32. **Gradient checkpointing** keeps each decoder layer's input and recomputes the
layer in the backward pass (non-reentrant), trading about a third more compute for activations of
one layer instead of all of them (``lis train plan`` puts numbers on both).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lis.errors import LisError


@dataclass(frozen=True)
class Precision:
    bf16: bool
    gradient_checkpointing: bool


def resolve_precision(section: dict[str, Any] | None, *, cuda: bool | None = None,
                      where: str = "grpo.precision") -> Precision:
    """The knobs of a ``precision`` params section, ``auto`` resolved (on when CUDA is available).

    Raises LisError for bf16 on a CPU without bf16 support (none of this project's machines)."""
    sec = section or {}
    if cuda is None:
        import torch

        cuda = torch.cuda.is_available()
    on_cuda = cuda

    def knob(name: str) -> bool:
        v = sec.get(name, "auto")
        if v == "auto":
            return on_cuda
        if isinstance(v, bool):
            return v
        raise LisError(f"{where}.{name} = {v!r} is not auto, true or false",
                       f"set {where}.{name} to auto, true or false")

    return Precision(bf16=knob("bf16"), gradient_checkpointing=knob("gradient_checkpointing"))

"""Precision and memory knobs of the trainers (params ``grpo.precision`` / ``sft.precision``).

    p = resolve_precision("auto", "auto")   # Precision(bf16=..., gradient_checkpointing=...)

``auto`` turns a knob on with CUDA. **bf16** is mixed precision: weights, gradients and AdamW's moments
stay fp32, the matrix products run in bf16 under autocast. Pure bf16 weights are not offered for full
fine-tuning: an update at the paper's learning rate is far below bf16's resolution and would round away
(with LoRA the frozen base is bf16, the adapters fp32). **Gradient checkpointing** keeps each decoder
layer's input and recomputes the layer in the backward pass (non-reentrant): more compute, far fewer
activations (``lis train plan``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Precision:
    bf16: bool
    gradient_checkpointing: bool


def resolve_precision(bf16: bool | str, gradient_checkpointing: bool | str, *, cuda: bool | None = None) -> Precision:
    """The two knobs of a ``precision`` params block (true, false or auto), ``auto`` resolved: on when CUDA is
    available (``cuda``: None asks torch)."""
    if cuda is None:
        import torch

        cuda = torch.cuda.is_available()
    return Precision(bf16=cuda if bf16 == "auto" else bool(bf16),
                     gradient_checkpointing=cuda if gradient_checkpointing == "auto" else bool(gradient_checkpointing))

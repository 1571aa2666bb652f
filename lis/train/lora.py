"""LoRA adapters (peft) for the trainers: params ``grpo.lora`` / ``sft.lora``.

    cfg = lora_config(grpo.lora)                  # None when rank is 0 (full fine-tuning)
    model = generation_model(trainer_model)       # the model whose forward applies the adapters
    merged = merged_model(trainer_model)          # what is written for evaluation and serving

Rank 0 trains every weight (as the paper). Rank r > 0 trains adapters on ``target_modules`` with
scaling ``alpha / r``; the base stays frozen (in bf16 when ``precision.bf16``). A stage always writes a
plain transformers model, the adapters merged, so evaluation, serving and the next stage load it like
any other; checkpoints hold the adapters only. LoRA usually wants a larger learning rate.
"""
from __future__ import annotations

from typing import Any

from lis.config.training import Lora
from lis.errors import LisError


def lora_config(lora: Lora, where: str = "grpo.lora") -> Any:
    """peft's ``LoraConfig`` of a validated ``lora`` params block; None for rank 0."""
    if lora.rank <= 0:
        return None
    try:
        from peft import LoraConfig
    except ImportError:
        raise LisError(f"{where}.rank is {lora.rank} but peft is not installed", "pip install peft (pinned in "
                       "pyproject.toml), or set the rank to 0") from None
    return LoraConfig(r=lora.rank, lora_alpha=float(lora.alpha), lora_dropout=float(lora.dropout),
                      target_modules=list(lora.target_modules), bias="none", task_type="CAUSAL_LM")


def is_lora(model: Any) -> bool:
    try:
        from peft import PeftModel
    except ImportError:
        return False
    return isinstance(model, PeftModel)


def generation_model(model: Any) -> Any:
    """The transformers model whose forward runs the adapters too: engines call it with keyword arguments
    (``logits_to_keep``, ``past_key_values``) that the peft wrapper would hide."""
    return model.get_base_model() if is_lora(model) else model


def merged_model(model: Any) -> Any:
    """The plain transformers model to write: adapters merged into the base (the peft model is
    changed in place; call it once training is over). A model without adapters is returned as is."""
    return model.merge_and_unload() if is_lora(model) else model


def merged_state_dict(model: Any) -> dict[str, Any]:
    """The plain model's weights with any LoRA adapters merged out of place (the trained model is not
    touched, so a merge and unmerge cannot round a bf16 base); tied weights stored once."""
    import torch

    with torch.no_grad():
        base = model.get_base_model() if is_lora(model) else model
        deltas = {}
        for name, module in base.named_modules():  # a model without adapters has no LoRA layer: no delta
            if hasattr(module, "get_delta_weight") and hasattr(module, "base_layer"):
                for adapter in getattr(module, "active_adapters", ["default"]):
                    if adapter in getattr(module, "lora_A", {}):
                        d = module.get_delta_weight(adapter)
                        deltas[f"{name}.base_layer.weight"] = deltas.get(f"{name}.base_layer.weight", 0) + d
        out, seen = {}, set()
        for key, value in base.state_dict().items():
            if "lora_" in key:
                continue
            if key in deltas:
                value = value + deltas[key].to(value.dtype)
            plain = key.replace(".base_layer.", ".")
            if value.data_ptr() in seen and key.endswith("lm_head.weight"):
                continue  # tied to the embeddings
            seen.add(value.data_ptr())
            out[plain] = value.detach().to("cpu").contiguous().clone()
    return out


def trainable_parameters(model: Any) -> tuple[int, int]:
    """(trainable, all) parameter counts."""
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return trainable, sum(p.numel() for p in model.parameters())

"""GRPO's weight sync into a real vLLM server (``grpo.vllm.sync: files``: the safetensors written, vLLM's
weight-reload RPC, its prefix cache reset), proven on the server's own log-probabilities: after the push they are
the new weights' (within float32's mismatch), not the old ones'. A push that does nothing fails this test."""
from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM

from lis.bench.generate import bench_prompts
from lis.models.vllm_tokens import VLLMTokenEngine
from lis.train.grpo.vllm_server import ServerMode
from lis.train.lora import lora_config
from tests import sections
from tests.vllm.test_vllm_tokens import FP32_TOL, trainer_logprobs

pytestmark = [pytest.mark.slow]


def changed(model_dir, lora: bool):
    """The tiny agent with new weights the way training gives them: every weight moved (full fine-tuning),
    or LoRA adapters with non-zero B (the base untouched)."""
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    g = torch.Generator().manual_seed(1)
    if lora:
        from peft import get_peft_model

        model = get_peft_model(model, lora_config(sections.grpo(lora={"rank": 4, "alpha": 8, "target_modules": [
            "q_proj", "v_proj", "down_proj"]}).lora))
        params = [p for n, p in model.named_parameters() if "lora_B" in n]
    else:
        params = list(model.parameters())
    with torch.no_grad():
        for p in params:
            p.add_(torch.randn(p.shape, generator=g) * 0.05)
    return model.eval()


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_after_the_push_the_server_scores_with_the_new_weights(vllm_server, tiny_model, tmp_path, lora):
    ids = bench_prompts(tiny_model, 1)[0]
    mode = ServerMode.from_settings(sections.vllm(base_url=vllm_server.root, sync="files"))
    assert mode.server_kind() == "vllm"
    with VLLMTokenEngine(vllm_server.url, vllm_server.model, api_key="EMPTY") as engine:
        old = trainer_logprobs(tiny_model.model, ids)
        assert max(abs(a - b) for a, b in zip(engine.prompt_logprobs(ids), old)) < FP32_TOL
        model = changed(vllm_server.model_dir, lora)
        new = trainer_logprobs(model, ids)
        assert max(abs(a - b) for a, b in zip(new, old)) > 100 * FP32_TOL  # the new weights are other weights
        try:
            answer = mode.push_weights(model, tmp_path / "served-weights")
            assert answer["server"] == "vllm"
            served = engine.prompt_logprobs(ids)
            assert max(abs(a - b) for a, b in zip(served, new)) < FP32_TOL, "the server does not have the new weights"
            assert max(abs(a - b) for a, b in zip(served, old)) > 100 * FP32_TOL
        finally:  # the session's server serves the tiny agent again
            mode.push_weights(tiny_model.model, tmp_path / "original")
        assert max(abs(a - b) for a, b in zip(engine.prompt_logprobs(ids), old)) < FP32_TOL

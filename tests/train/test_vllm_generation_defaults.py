"""GRPO's sampling policy reaches a vLLM-style server intact when the served model ships sampling defaults.

A vLLM server fills every sampling field a request leaves out from the model's ``generation_config.json``
(``--generation-config auto``); Qwen3-4B-Instruct-2507's says temperature 0.7, top-k 20, top-p 0.8. The
rollouts' policy (``rl_sampling`` of the grpo section: temperature 1, top-p 1, no top-k) must therefore be
sent with every field explicit, no top-k as ``top_k: -1``, or the server samples from the top 20 and its
log-probs are renormalised over them: the trainer's importance ratio then compares two different policies.

The stand-in: tests/chat_server_program.py --model-dir (our ChatServer answering ``/v1/completions`` with
token ids, in its own process, started by GRPO's ServerMode launcher), which falls back to the folder's
``generation_config.json`` the way vLLM does, and logs each request body with the settings it drew with
(``--request-log``). The tiny base model's folder gets Qwen3-Instruct's generation config. Not run here:
vLLM itself (no GPU, no vLLM on this machine)."""
from __future__ import annotations

import json
import shutil
import sys
import urllib.request

import pytest
import torch

from lis.models.base import Sampling
from lis.train.grpo.vllm_server import ServerMode
from tests import sections
from tests.models.test_sampler_shaped import by_hand
from tests.serve.server import free_port
from tests.test_server_process import PROGRAM
from tests.train.test_grpo_checks import QWEN3_INSTRUCT_GENERATION

pytestmark = [pytest.mark.training]


@pytest.fixture
def instruct_dir(tiny_base_dir, tmp_path):
    """The tiny base model with Qwen3-4B-Instruct-2507's sampling defaults in its generation_config.json."""
    folder = tmp_path / "instruct"
    shutil.copytree(tiny_base_dir, folder)
    path = folder / "generation_config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **QWEN3_INSTRUCT_GENERATION}, indent=2))
    return folder


def full_vocabulary_steps(model, prompt: list[int], ids: list[int]) -> torch.Tensor:
    """The raw logits (float32) each drawn id was sampled from: one forward pass over prompt + ids."""
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([prompt + ids]))
    return out.logits[0, len(prompt) - 1:len(prompt) + len(ids) - 1].float()


def test_the_rl_policy_samples_the_full_vocabulary_on_a_server_with_generation_defaults(instruct_dir, tmp_path):
    """The policy ServerMode builds for GRPO (the trainer's path: ``mode.policy(..., sampling=rl_sampling())``)
    against the stand-in serving a model whose generation config says top-k 20: the request carries
    ``top_k: -1`` (and temperature 1, top-p 1, repetition penalty 1), the server draws with no top-k, and
    the log-probs it reports are ``log_softmax`` of the full vocabulary's logits at temperature 1, with
    drawn tokens outside the top 20. Control: a request without sampling fields gets the generation
    config's settings (T 0.7, top-k 20, top-p 0.8) — the fallback this test guards against is real.

    Catches (checked): VLLMTokenEngine.request_body leaving ``top_k`` out when top-k is off (the server
    then applies top-k 20: no drawn token outside the top 20, log-probs renormalised over the kept
    set, off by nats); the same for a policy whose sampling leaves top-k unset (None)."""
    from lis.models.local_hf import LocalHFModel
    from lis.train.grpo.settings import rl_sampling

    port, log = free_port(), tmp_path / "requests.jsonl"
    mode = ServerMode.from_settings(sections.vllm(
        base_url=f"http://127.0.0.1:{port}", startup_timeout_s=180, sync="trl",
        command=[sys.executable, str(PROGRAM), "--port", "{port}", "--model-dir", "{model}", "--request-log", str(log)]))
    local = LocalHFModel.load(instruct_dir, name="policy", device="cpu", seed=0)
    assert (local.generation_defaults.top_k, local.generation_defaults.top_p) == (20, 0.8)  # the file is read
    prompt = local.render([{"role": "user", "content": "Compute 17 * 23 and write the answer to /testbed/answer.txt"}])
    mode.start(instruct_dir, tmp_path / "serve")
    try:
        policy = mode.policy(local.model, local.tokenizer, seed=0, sampling=rl_sampling(sections.grpo()))
        draw = policy.generate_ids(prompt, 48, Sampling(seed=7))
        # the control: the same server, a request that leaves every sampling field out
        body = {"model": policy.engine.model, "prompt": prompt, "max_tokens": 48, "logprobs": 0, "seed": 7,
                "return_token_ids": True, "return_tokens_as_token_ids": True, "stop_token_ids": [],
                "ignore_eos": True}
        req = urllib.request.Request(f"{mode.base_url}/v1/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            control = json.loads(r.read())["choices"][0]
    finally:
        mode.stop()
    sent, defaulted = [json.loads(line) for line in log.read_text().splitlines()]

    # the RL draw: the full vocabulary at temperature 1
    assert len(draw.ids) >= 16, "too short a draw to tell top-k 20 from none"
    logits = full_vocabulary_steps(local.model, prompt, draw.ids)
    full = torch.log_softmax(logits, dim=-1)
    want = full.gather(1, torch.tensor(draw.ids).unsqueeze(1)).squeeze(1).tolist()
    assert draw.logprobs == pytest.approx(want, abs=1e-4), "the server's log-probs are not the full vocabulary's"
    ranks = [int((row > row[t]).sum()) for row, t in zip(logits, draw.ids)]
    assert max(ranks) >= 20, f"every drawn token is in the top 20 (ranks {ranks}): a top-k was applied"
    assert sent["body"]["top_k"] == -1 and sent["body"]["top_p"] == 1.0 and sent["body"]["temperature"] == 1.0
    assert sent["body"]["repetition_penalty"] == 1.0
    assert sent["applied"] == {"temperature": 1.0, "top_k": None, "top_p": 1.0, "repetition_penalty": 1.0,
                               "seed": 7}

    # the control: the generation config's settings, applied by the server
    assert "top_k" not in defaulted["body"] and "temperature" not in defaulted["body"]
    assert defaulted["applied"] == {"temperature": 0.7, "top_k": 20, "top_p": 0.8, "repetition_penalty": None,
                                    "seed": 7}
    ids = control["token_ids"]
    steps = full_vocabulary_steps(local.model, prompt, ids)
    for row, tok, lp in zip(steps, ids, control["logprobs"]["token_logprobs"]):
        x, keep, _ = by_hand(row, 0.7, 20, 0.8, None, None)
        assert tok in keep and len(keep) <= 20
        assert lp == pytest.approx(float(x[tok] - torch.logsumexp(x[keep], dim=0)), abs=1e-4)
    local.close()

"""Fixtures of the model tests: the tiny agent (built once per machine), a random-init tiny Qwen3 (no
Docker, no training: for the tests of mechanics), a free port, a real prompt."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.sandbox.conftest import base_config  # noqa: F401  (session fixture: the image, small limits)

# The tiny agent's shape (params.yaml base.tiny.arch) with random weights: the same kernels, cache sizes
# and prompt lengths as the trained agent, no teacher, no SFT, no sandbox.
RANDOM_ARCH = {"model_type": "qwen3", "hidden_size": 64, "intermediate_size": 192, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 4096,
               "tie_word_embeddings": True, "max_position_embeddings": 16384}


RANDOM_STD = 0.3


@pytest.fixture(scope="session")
def random_dir(tmp_path_factory) -> Path:
    """A random-init tiny Qwen3 (seed 0) with the tiny base's offline BPE tokenizer (trained here on the
    first 20 stdlib sources and 100 scripted episodes under the real prompts, on one thread: deterministic),
    built once per test session in about 10 s. Tests of mechanics (exact ids and log-probs, batching, seeding, limits,
    caches, parsing, server formats) use it; tests of trained behaviour use ``tiny_dir``."""
    import torch
    from transformers import Qwen3ForCausalLM

    from lis.offline import tokenizer as tt
    from lis.offline.base import _corpus_conversations
    from lis.offline.random_model import build_random

    root = tmp_path_factory.mktemp("random-tiny")
    tok = tt.train_tokenizer(tt.corpus(tt.stdlib_files(20), tt.rendered_texts(_corpus_conversations(0, 100, []))),
                             RANDOM_ARCH["vocab_size"], RANDOM_ARCH["max_position_embeddings"])
    tok.save_pretrained(root / "tokenizer")
    build_random(root / "model", RANDOM_ARCH, tokenizer_dir=root / "tokenizer", seed=0)
    # Wider weights than the init's N(0, 0.02): with those the next-token distribution is near flat and the
    # greedy draw repeats one id on every prompt; with N(0, 0.3) (seeded) greedy turns are varied sequences
    # and a T 1.0 draw's log-probs are about -2, so seeds draw different ids.
    model = Qwen3ForCausalLM.from_pretrained(root / "model", dtype=torch.float32)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            if p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=gen) * RANDOM_STD)
    model.save_pretrained(root / "model")
    return root / "model"


@pytest.fixture(scope="session")
def random_model(random_dir):
    """The random-init tiny Qwen3 loaded through the local transformers backend (shared across tests)."""
    from lis.models.local_hf import LocalHFModel

    return LocalHFModel.load(random_dir, name="tiny-random", device="cpu", seed=0)


@pytest.fixture
def unused_port() -> int:
    """A TCP port nothing listens on (bound once by the OS, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

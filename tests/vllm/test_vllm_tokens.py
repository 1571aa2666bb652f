"""The token-exact engine (lis.models.vllm_tokens) against a real vLLM server: token ids in and out, seeds,
stop ids, the server's max_model_len, and its log-probabilities against the trainer's own forward pass."""
from __future__ import annotations

import pytest
import torch

from lis.bench.generate import bench_prompts
from lis.models.base import ContextLengthError
from lis.models.sampler import sample
from lis.models.vllm_tokens import VLLMTokenEngine
from tests.vllm.conftest import MAX_MODEL_LEN

pytestmark = [pytest.mark.slow]
FP32_TOL = 1e-3  # float32 on both sides: measured ~2e-5 at most per token (docs/training-scale.md, "The train–inference mismatch")


@pytest.fixture(scope="module")
def engine(vllm_server):
    with VLLMTokenEngine(vllm_server.url, vllm_server.model, api_key="EMPTY", stop_ids=set()) as e:
        yield e


@pytest.fixture(scope="module")
def prompts(tiny_model):
    return bench_prompts(tiny_model, 4)


def trainer_logprobs(model, ids: list[int], temperature: float = 1.0) -> list[float]:
    """log_softmax(logits / T) of each of ids[1:] (what TRL recomputes), float32."""
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].float()
    lp = torch.log_softmax(logits / temperature, -1)
    return lp[:-1].gather(1, torch.tensor(ids[1:])[:, None])[:, 0].tolist()


def test_ids_round_trip_greedy_equals_the_local_sampler(engine, prompts, tiny_model):
    for p in prompts:
        got = engine.generate(p, 24, temperature=0.0, seed=0)
        local = sample(tiny_model.model, p, 24, set(), torch.Generator().manual_seed(0), temperature=0.0)
        assert got.ids == local.ids and len(got.ids) == 24 and not got.stopped


def test_a_seed_gives_the_same_sequence_and_stop_ids_end_it(engine, prompts):
    a = engine.generate(prompts[0], 24, temperature=1.0, seed=7)
    b = engine.generate(prompts[0], 24, temperature=1.0, seed=7)
    c = engine.generate(prompts[0], 24, temperature=1.0, seed=8)
    assert a.ids == b.ids and a.logprobs == pytest.approx(b.logprobs, abs=1e-6) and a.ids != c.ids
    stop = a.ids[10]
    first = a.ids.index(stop)
    d = engine.generate(prompts[0], 24, temperature=1.0, seed=7, stop_ids={stop})
    assert d.ids == a.ids[: first + 1] and d.stopped  # the stop id ends it and is kept, as our sampler does


def test_max_model_len_is_read_and_a_long_prompt_gets_the_room_left(engine, prompts):
    assert engine.max_model_len() == MAX_MODEL_LEN
    long = (prompts[0] * 20)[: MAX_MODEL_LEN - 5]
    got = engine.generate(long, 100, temperature=1.0, seed=0)
    assert len(got.ids) == 5
    with pytest.raises(ContextLengthError):
        engine.generate((prompts[0] * 20)[:MAX_MODEL_LEN], 10, temperature=1.0, seed=0)


def test_logprobs_agree_with_the_trainers_forward_pass(engine, prompts, tiny_model):
    served = engine.prompt_logprobs(prompts[0])
    own = trainer_logprobs(tiny_model.model, prompts[0])
    assert len(served) == len(own) == len(prompts[0]) - 1
    assert max(abs(a - b) for a, b in zip(served, own)) < FP32_TOL
    # sampled at T 1 (the paper's recipe): the sampler's log-probs are the trainer's
    for i, p in enumerate(prompts):
        d = engine.generate(p, 32, temperature=1.0, seed=i)
        t = trainer_logprobs(tiny_model.model, p + d.ids)[len(p) - 1:]
        assert max(abs(a - b) for a, b in zip(t, d.logprobs)) < FP32_TOL
    # with top-k / top-p the server reports the truncated distribution's log-probs (processed_logprobs): the
    # trainer's log_softmax(logits / T) is lower by the kept mass, the mismatch the IS correction would see
    d = engine.generate(prompts[0], 32, temperature=0.7, top_k=20, top_p=0.8, seed=0)
    t = trainer_logprobs(tiny_model.model, prompts[0] + d.ids, 0.7)[len(prompts[0]) - 1:]
    assert all(a <= b + FP32_TOL for a, b in zip(t, d.logprobs)) and sum(b - a for a, b in zip(t, d.logprobs)) > 0.1

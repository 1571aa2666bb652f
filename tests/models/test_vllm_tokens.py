"""VLLMTokenEngine over real HTTP against ChatServer's vLLM-format ``/v1/completions`` (the random-init
tiny Qwen3 of tests/models/conftest.py behind it, batched by its engine: mechanics, no trained weights).
Not verified here: a real vLLM server (no GPU, no vLLM on this machine); the request and answer fields
follow vLLM's protocol (see lis/models/vllm_tokens.py)."""
from __future__ import annotations

import json
import threading
import urllib.request

import pytest
import torch

from lis.agent.tools.schemas import TOOLS
from lis.models import ChatServer, ContextLengthError, ModelError, Sampling
from lis.models.vllm_tokens import VLLMTokenEngine
from lis.util import cancel


@pytest.fixture(scope="module")
def prompt_ids(random_model) -> list[int]:
    from lis.prompts import render_prompts
    from lis.tasks import load_samples

    return random_model.render(render_prompts(load_samples("math")[0], "sandbox"), TOOLS)


def post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_the_server_answers_in_vllm_format(random_model, prompt_ids):
    with ChatServer(random_model) as srv:
        status, body = post(srv.base_url + "/completions", {
            "model": "tiny", "prompt": prompt_ids, "max_tokens": 20, "temperature": 0, "logprobs": 0,
            "return_token_ids": True, "return_tokens_as_token_ids": True,
            "stop_token_ids": sorted(random_model.stop_ids), "ignore_eos": True})
        with urllib.request.urlopen(srv.base_url + "/models") as r:
            models = json.loads(r.read())
    assert status == 200 and body["object"] == "text_completion" and body["id"].startswith("cmpl-")
    [choice] = body["choices"]
    ref = random_model.generate_ids(prompt_ids, 20, Sampling(temperature=0))
    assert choice["token_ids"] == ref.ids and choice["prompt_token_ids"] == prompt_ids
    lp = choice["logprobs"]
    assert lp["tokens"] == [f"token_id:{t}" for t in ref.ids]
    assert lp["token_logprobs"] == pytest.approx(ref.logprobs, abs=1e-6)
    assert lp["top_logprobs"] == [{f"token_id:{t}": v} for t, v in zip(ref.ids, lp["token_logprobs"])]
    assert lp["text_offset"][0] == 0 and lp["text_offset"][1] == len(lp["tokens"][0])
    assert choice["finish_reason"] == ("stop" if ref.stopped else "length")
    assert choice["stop_reason"] == (ref.ids[-1] if ref.stopped else None)
    assert choice["text"] == random_model.tokenizer.decode(ref.ids, skip_special_tokens=True)
    assert body["usage"] == {"prompt_tokens": len(prompt_ids), "completion_tokens": len(ref.ids),
                             "total_tokens": len(prompt_ids) + len(ref.ids), "prompt_tokens_details": None}
    assert models["data"][0]["max_model_len"] == random_model.max_context


def test_client_draws_what_the_local_model_draws(random_model, prompt_ids):
    with ChatServer(random_model) as srv, VLLMTokenEngine(srv.base_url, "tiny", stop_ids=random_model.stop_ids) as eng:
        greedy = eng.generate(prompt_ids, 40, temperature=0)
        seeded = eng.generate(prompt_ids, 40, temperature=0.8, top_p=0.9, top_k=30, seed=12)
        again = eng.generate(prompt_ids, 40, temperature=0.8, top_p=0.9, top_k=30, seed=12)
        short = eng.generate(prompt_ids, 3, temperature=0, stop_ids=set())
        body = srv.requests[0]
    local_greedy = random_model.generate_ids(prompt_ids, 40, Sampling(temperature=0))
    local_seeded = random_model.generate_ids(prompt_ids, 40, Sampling(temperature=0.8, top_p=0.9, top_k=30, seed=12))
    assert (greedy.ids, greedy.stopped) == (local_greedy.ids, local_greedy.stopped)
    assert greedy.logprobs == pytest.approx(local_greedy.logprobs, abs=1e-6)
    assert seeded.ids == again.ids == local_seeded.ids
    assert short.ids == local_greedy.ids[:3] and not short.stopped
    assert body["prompt"] == prompt_ids and body["logprobs"] == 0 and body["return_token_ids"] is True
    assert body["return_tokens_as_token_ids"] is True and body["ignore_eos"] is True
    assert body["stop_token_ids"] == sorted(random_model.stop_ids)


def test_concurrent_client_calls_are_batched_by_the_server(random_model, prompt_ids):
    prompts = [prompt_ids[: 40 + 25 * i] for i in range(8)]
    refs = [random_model.engine.generate(p, 24, temperature=0, stop_ids=set()) for p in prompts]
    steps = random_model.engine.stats["steps"]
    out: list = [None] * 8
    with ChatServer(random_model) as srv, VLLMTokenEngine(srv.base_url, "tiny", stop_ids=set()) as eng:
        def run(i):
            out[i] = eng.generate(prompts[i], 24, temperature=0)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    for o, r in zip(out, refs):
        assert o.ids == r.ids and len(o.ids) == 24
    assert random_model.engine.stats["steps"] - steps < 8 * 24


def test_generator_without_seed_sends_reproducible_seeds(random_model, prompt_ids):
    with ChatServer(random_model) as srv, VLLMTokenEngine(srv.base_url, "tiny", stop_ids=set()) as eng:
        runs = [[eng.generate(prompt_ids, 12, generator=g).ids for _ in range(2)]
                for g in (torch.Generator().manual_seed(1), torch.Generator().manual_seed(1))]
        seeds = [r["seed"] for r in srv.requests]
    assert runs[0] == runs[1] and seeds[:2] == seeds[2:] and seeds[0] != seeds[1]


def test_context_limits(random_dir, prompt_ids):
    from lis.models import LocalHFModel

    small = LocalHFModel.load(random_dir, device="cpu", max_context=len(prompt_ids) + 5)
    with ChatServer(small) as srv:
        with VLLMTokenEngine(srv.base_url, small.name, stop_ids=set()) as eng:
            assert len(eng.generate(prompt_ids, 100, temperature=0).ids) == 5   # cut to max_model_len
            with pytest.raises(ContextLengthError) as err:
                eng.generate(prompt_ids + [5] * 10, 4)
            assert err.value.limit == len(prompt_ids) + 5
        # a server that does not report max_model_len: its 400 in vLLM's words
        with VLLMTokenEngine(srv.base_url, "tiny", max_retries=3, stop_ids=set()) as eng:
            n = len(srv.requests)
            with pytest.raises(ContextLengthError) as err:
                eng.generate(prompt_ids, 100)
            assert (err.value.limit, err.value.prompt_tokens) == (len(prompt_ids) + 5, len(prompt_ids))
            assert len(srv.requests) == n + 1   # never retried
    small.close()


def test_retries_and_refusals(random_model, prompt_ids, unused_port):
    with ChatServer(random_model, fail_first=2, fail_status=503) as srv:
        with VLLMTokenEngine(srv.base_url, "tiny", max_retries=2, backoff_s=0.01) as eng:
            assert len(eng.generate(prompt_ids, 4, temperature=0, stop_ids=set()).ids) == 4
        assert len(srv.requests) == 3
    with ChatServer(random_model) as srv, VLLMTokenEngine(srv.base_url, "tiny", max_retries=2) as eng:
        with pytest.raises(ModelError, match="request refused .*HTTP 400.*vocabulary"):
            eng.generate([10**7], 4)
        assert len(srv.requests) == 1
    with VLLMTokenEngine(f"http://127.0.0.1:{unused_port}/v1", "tiny", max_retries=1, backoff_s=0.01,
                         max_model_len=4096) as eng:
        with pytest.raises(ModelError, match="connection failed.*gave up after 2 attempts"):
            eng.generate(prompt_ids, 4)


def test_cancellation_abandons_the_request_in_flight(random_model, prompt_ids):
    import time

    with ChatServer(random_model) as srv, VLLMTokenEngine(srv.base_url, "tiny", stop_ids=set()) as eng:
        result: list = []

        def run():
            try:
                eng.generate(prompt_ids, 3000, seed=1)
            except cancel.Interrupted:
                result.append(time.monotonic())

        t = threading.Thread(target=run)
        t.start()
        time.sleep(1.0)
        t0 = time.monotonic()
        cancel.request()
        try:
            t.join(timeout=10)
            assert result and result[0] - t0 < 1.0
        finally:
            cancel.reset()

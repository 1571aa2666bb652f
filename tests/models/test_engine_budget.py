"""BatchEngine's KV-cache budget: rows are admitted on their current length (``max_new_tokens``
reserves nothing) and preempted (recomputed later) when the batch outgrows ``max_batch_tokens``.

The model is a random-init Qwen3 of the tiny base's shape (lis.offline.base.DEFAULT_ARCH), built
in memory in a fraction of a second. Its embeddings are untied: the tiny base ties them, and a
random tied model's greedy draw is the prompt's last token over and over, which would make "the
greedy ids are equal" say nothing. A random model never stops by itself, so requests that must end
early get a per-call stop set covering a tenth of the vocabulary (at temperature 1 each token stops
with a probability near 1/10).

Float note: a preempted request draws its next token from a prefill of its prompt and ids, where
the request alone fed the same ids one decode step at a time (and in a batch the matrix products
have more rows): logits agree up to CPU float rounding (~1e-6). The ids below are asserted equal,
the log-probabilities within 1e-4; a greedy tie or a seeded uniform draw within ~1e-6 of a token
boundary could tell them apart (not seen with these seeds and shapes).
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from lis.models.batch_engine import BatchEngine
from lis.models.sampler import Draw

ROOT = Path(__file__).resolve().parents[2]
VOCAB = 1024
LP_TOL = 1e-4
JOIN_S = 120


@pytest.fixture(scope="module")
def model():
    """A random-init Qwen3 (tiny base shape, untied embeddings, a wider init so that draws are peaked)."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from lis.offline.base import DEFAULT_ARCH

    cfg = Qwen3Config(**DEFAULT_ARCH, vocab_size=VOCAB, tie_word_embeddings=False, initializer_range=0.1,
                      max_position_embeddings=32768)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return Qwen3ForCausalLM(cfg).eval()


def random_prompt(n: int, seed: int) -> list[int]:
    return np.random.default_rng(seed).integers(0, VOCAB, n).tolist()


def stop_set(seed: int = 0) -> frozenset[int]:
    """A tenth of the vocabulary: a random model's seeded draws at temperature 1 end within a few dozen tokens."""
    return frozenset(np.random.default_rng(1000 + seed).choice(VOCAB, VOCAB // 10, replace=False).tolist())


def in_order(engine: BatchEngine, calls: list[dict]) -> list[Draw | BaseException]:
    """Run ``engine.generate(**call)`` for every call, each from its own thread, queued in the given
    order (each thread starts once the previous request is in the queue: the engine must be made with
    ``max_batch=len(calls)`` or a long ``max_wait_s``, so that it admits none before all are queued),
    and return every result (or exception) once all threads ended; a thread still waiting after
    ``JOIN_S`` fails the test (a deadlock)."""
    out: list = [None] * len(calls)

    def run(i: int) -> None:
        try:
            out[i] = engine.generate(**calls[i])
        except BaseException as e:  # noqa: BLE001 - returned and checked by the test
            out[i] = e

    threads = []
    for i in range(len(calls)):
        threads.append(threading.Thread(target=run, args=(i,), daemon=True))
        threads[-1].start()
        deadline = time.monotonic() + 10
        while len(engine._queue) < i + 1 and engine.stats["prefills"] == 0 and time.monotonic() < deadline:
            time.sleep(0.001)  # the queue is read without its lock: only its length, only to order the calls
    for t in threads:
        t.join(timeout=JOIN_S)
    assert not any(t.is_alive() for t in threads), "a request never finished"
    return out


def alone(model, call: dict) -> Draw:
    """The same call alone in a fresh engine (which computes exactly what the plain sampler computes)."""
    with BatchEngine(model, set()) as engine:
        return engine.generate(**call)


def assert_same(got: Draw | BaseException, ref: Draw) -> None:
    assert isinstance(got, Draw), got
    assert got.ids == ref.ids and got.stopped == ref.stopped
    assert len(got.logprobs) == len(ref.logprobs)
    assert max(abs(a - b) for a, b in zip(got.logprobs, ref.logprobs)) < LP_TOL


def spy_preemptions(engine: BatchEngine) -> list[int]:
    """The prompt lengths of the rows ``engine`` preempts, in order (a wrapper around its own method)."""
    seen: list[int] = []
    real = engine._preempt

    def preempt(leave):
        seen.extend(len(r.prompt) for r in leave)
        real(leave)

    engine._preempt = preempt
    return seen


def test_the_papers_budgets_batch_many_rows(model):
    """The full profile's budgets: 12 requests of 1,500-3,000-token prompts, each allowed the whole
    turn budget (16,384 new tokens), in a 131,072-position batch. The old rule reserved prompt +
    max_new_tokens per row, (rows + 1) x 19,384 <= 131,072, so at most 6 rows ran together:
    measured by reverting _fits to it, this test failed with max_rows == 6. Admitted on their
    current length all 12 run at once; each ends on its stop set after a few dozen tokens."""
    from lis.params import load

    g = load(ROOT, profile="full").section("grpo")
    max_new, engine_cfg = g["max_tokens_per_turn"], g["engine"]
    assert max_new >= 8192 and g["max_prompt_tokens"] >= 3000 and engine_cfg["max_batch_tokens"] >= 65536
    lengths = np.random.default_rng(7).integers(1500, 3001, 12).tolist()
    calls = [{"prompt_ids": random_prompt(n, i), "max_new_tokens": max_new, "temperature": 1.0, "seed": i,
              "stop_ids": stop_set(i)} for i, n in enumerate(lengths)]
    with BatchEngine(model, set(), max_batch=engine_cfg["max_batch"], max_batch_tokens=engine_cfg["max_batch_tokens"],
                     max_wait_s=1.0) as engine:
        got = in_order(engine, calls)
        stats = dict(engine.stats)
    for draw, call in zip(got, calls):
        assert isinstance(draw, Draw), draw
        assert draw.stopped and draw.ids[-1] in call["stop_ids"] and len(draw.ids) < 200
        assert not set(draw.ids[:-1]) & call["stop_ids"]
    assert stats["max_rows"] >= 8, stats
    assert stats["preemptions"] == 0 and stats["max_positions"] <= engine_cfg["max_batch_tokens"]


# prompts of different lengths; the budget takes three of them, and preempts as they grow
GREEDY = [40, 70, 100, 130, 25]
BUDGET = 330


def same_as_alone(model, calls: list[dict]) -> tuple[dict, list]:
    """Run ``calls`` together under the small budget: each one's result equals the same call alone in a
    fresh engine; returns the engine's stats and the preempted rows."""
    refs = [alone(model, c) for c in calls]
    with BatchEngine(model, set(), max_batch=len(calls), max_wait_s=1.0, max_batch_tokens=BUDGET) as engine:
        preempted = spy_preemptions(engine)
        got = in_order(engine, calls)
        stats = dict(engine.stats)
    for g, r in zip(got, refs):
        assert_same(g, r)
    return stats, preempted


def test_a_preempted_greedy_request_continues_exactly_where_it_was(model):
    calls = [{"prompt_ids": random_prompt(n, i), "max_new_tokens": 48, "temperature": 0}
             for i, n in enumerate(GREEDY)]
    stats, preempted = same_as_alone(model, calls)
    assert stats["preemptions"] > 0 and len(preempted) == stats["preemptions"]
    assert stats["recomputed_tokens"] > 0 and stats["max_rows"] >= 3
    assert stats["max_positions"] <= BUDGET   # no row alone is larger than the budget here


def test_a_preempted_seeded_request_draws_what_it_draws_alone(model):
    """Seeded sampling (temperature 1, top-k, a repetition penalty: the preempted row's generator and
    ``seen`` go with it) gives the ids of the same call alone."""
    kw = {"temperature": 1.0, "top_k": 40, "repetition_penalty": 1.3}
    calls = [{"prompt_ids": random_prompt(n, 20 + i), "max_new_tokens": 48, "seed": 50 + i, **kw}
             for i, n in enumerate(GREEDY)]
    stats, preempted = same_as_alone(model, calls)
    assert stats["preemptions"] > 0 and set(preempted) <= set(GREEDY)


def test_with_the_prefix_cache_a_preempted_row_prefills_only_its_last_id(model):
    calls = [{"prompt_ids": random_prompt(n, 40 + i), "max_new_tokens": 48, "temperature": 0}
             for i, n in enumerate(GREEDY)]
    refs = [alone(model, c) for c in calls]
    with BatchEngine(model, set(), max_batch=len(calls), max_wait_s=1.0, max_batch_tokens=BUDGET,
                     prefix_cache_mb=64) as engine:
        got = in_order(engine, calls)
        stats = dict(engine.stats)
    for g, r in zip(got, refs):
        assert_same(g, r)
    assert stats["preemptions"] > 0
    assert stats["recomputed_tokens"] == stats["preemptions"]  # one id per re-admission, the rest was kept


def test_one_row_at_a_time_every_request_finishes_and_a_larger_one_runs_alone(model):
    """A budget that holds one row at a time (any two exceed it): nothing deadlocks, and a request
    larger than the budget (its prompt alone) still runs, alone, as does one that outgrows it."""
    budget = 80   # two rows need 2 x (45 + 1) at least
    calls = [{"prompt_ids": random_prompt(n, 60 + i), "max_new_tokens": new, "temperature": 0}
             for i, (n, new) in enumerate([(45, 20), (150, 10), (60, 90), (50, 20), (30, 30)])]
    refs = [alone(model, c) for c in calls]
    with BatchEngine(model, set(), max_batch=len(calls), max_wait_s=1.0, max_batch_tokens=budget) as engine:
        got = in_order(engine, calls)
        stats = dict(engine.stats)
    for g, r in zip(got, refs):
        assert_same(g, r)
    assert stats["max_rows"] == 1 and stats["preemptions"] == 0
    assert stats["max_positions"] == 150 + 10 - 1   # the larger one, alone at its last step


def test_rows_that_outgrow_the_budget_together_are_preempted_until_one_runs_alone(model):
    """Two rows fit when admitted, then grow past the budget: the later one waits (preempted) while
    the earlier one runs alone past the budget, and then it runs; both as alone, nothing deadlocks."""
    calls = [{"prompt_ids": random_prompt(n, 80 + i), "max_new_tokens": 80, "temperature": 0}
             for i, n in enumerate([30, 40])]
    refs = [alone(model, c) for c in calls]
    with BatchEngine(model, set(), max_batch=2, max_wait_s=1.0, max_batch_tokens=100) as engine:
        preempted = spy_preemptions(engine)
        got = in_order(engine, calls)
        stats = dict(engine.stats)
    for g, r in zip(got, refs):
        assert_same(g, r)
    assert stats["max_rows"] == 2 and preempted == [40] and stats["preemptions"] == 1

"""The deterministic rollout mode's engine (lis.models.lockstep): batches formed by rule, so the same
seeds give the same ids and log-probabilities bit for bit, whatever the timing of the callers.

A random-init Qwen3 of a few layers (no tokenizer, no training, no Docker) stands in for the policy:
what is tested is how batches form, not what a model learned. Each "episode" is a few turns; between
turns it sleeps as its environment would, for a time that differs between the two runs compared."""
from __future__ import annotations

import random
import threading
import time

import pytest
import torch

from lis.models.base import ModelError
from lis.models.batch_engine import BatchEngine
from lis.models.lockstep import Lockstep
from lis.util.slots import SlotExecutor

VOCAB = 512
STOP = {VOCAB - 1}


@pytest.fixture(scope="module")
def model():
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen3Config(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=2048,
                      tie_word_embeddings=True)
    return Qwen3ForCausalLM(cfg).eval()


def _episodes(n: int) -> list[list[int]]:
    rng = random.Random(7)
    return [[rng.randrange(VOCAB - 1) for _ in range(5 + 3 * i)] for i in range(n)]


def _run(model, *, lockstep: bool, delays: random.Random, slots: int = 4, episodes: int = 8, turns: int = 3):
    """Every episode's turns (ids, log-probs), the episodes dealt to ``slots`` threads; between turns
    each episode waits a random 0-60 ms (its 'tool call'), drawn from ``delays``."""
    engine = BatchEngine(model, STOP, max_batch=64)
    waits = [[delays.uniform(0, 0.06) for _ in range(turns)] for _ in range(episodes)]
    out: dict[int, list] = {}
    try:
        gen = Lockstep(engine, slots) if lockstep else engine

        def episode(i: int, context: list[int]) -> None:
            turns_out = []
            for t in range(turns):
                time.sleep(waits[i][t])
                draw = gen.generate(context, 12, temperature=1.0, seed=1000 * i + t)
                turns_out.append((tuple(draw.ids), tuple(draw.logprobs)))
                context = context + draw.ids + [3, 4, 5 + t]  # the environment's reply
            out[i] = turns_out

        ex = SlotExecutor(slots, enter=gen.slot if lockstep else None)
        futures = [ex.submit(episode, i, ctx) for i, ctx in enumerate(_episodes(episodes))]
        ex.start()
        for f in futures:
            f.result(timeout=300)
        ex.shutdown()
    finally:
        engine.close()
    return [out[i] for i in range(episodes)], getattr(gen, "round_stats", None)


def test_lockstep_rounds_give_the_same_draws_whatever_the_timing(model):
    first, stats = _run(model, lockstep=True, delays=random.Random(1))
    second, _ = _run(model, lockstep=True, delays=random.Random(2))
    assert first == second  # ids and log-probabilities, bit for bit
    # 8 episodes on 4 slots, 3 turns each: every round holds a turn of each live slot
    assert stats["requests"] == 24 and stats["max_round"] == 4 and stats["rounds"] == 6


def test_without_lockstep_the_timing_changes_the_numbers(model):
    """What the mode fixes: the same seeds, another timing, other batches — the log-probabilities
    differ in their last digits (and a token drawn near a boundary would flip)."""
    first, _ = _run(model, lockstep=False, delays=random.Random(1))
    second, _ = _run(model, lockstep=False, delays=random.Random(2))
    assert first != second
    ids = [[turn[0] for turn in ep] for ep in first], [[turn[0] for turn in ep] for ep in second]
    lps = [lp for ep in first for turn in ep for lp in turn[1]], [lp for ep in second for turn in ep for lp in turn[1]]
    if ids[0] == ids[1]:  # the same tokens: the difference is rounding
        assert max(abs(a - b) for a, b in zip(*lps)) < 1e-3


def test_generate_many_queues_a_round_at_once_and_fails_only_the_bad_call(model):
    engine = BatchEngine(model, STOP, max_batch=64)
    try:
        calls = [{"prompt_ids": [1, 2, 3], "max_new_tokens": 4, "seed": 1},
                 {"prompt_ids": [], "max_new_tokens": 4, "seed": 2},
                 {"prompt_ids": [5, 6], "max_new_tokens": 0},
                 {"prompt_ids": [1, 2, 3], "max_new_tokens": 4, "seed": 1}]
        good, bad, empty, again = engine.generate_many(calls)
        assert isinstance(bad, ModelError) and "empty prompt" in str(bad)
        assert empty.ids == [] and len(good.ids) == 4 and good.ids == again.ids
        assert engine.stats["shared_prefills"] == 1  # the two identical prompts arrived together: one prefill
    finally:
        engine.close()


def test_a_lockstep_refuses_what_would_break_its_rounds(model):
    class Served:  # an engine that cannot queue a round in one go (a vLLM server's)
        def generate(self, *a, **k):
            raise AssertionError

    with pytest.raises(ModelError, match="in-process batch engine"):
        Lockstep(Served(), 2)
    engine = BatchEngine(model, STOP)
    try:
        step = Lockstep(engine, 2)
        with pytest.raises(ModelError, match="outside the lockstep's slots"):
            step.generate([1, 2], 3, seed=0)
        # one slot leaves at once: the other's turns are rounds of one, not a wait for the slot that left
        with step.slot(0):
            pass
        done = threading.Event()

        def alone():
            with step.slot(1):
                step.generate([1, 2], 3, seed=0)
                step.generate([1, 2, 3], 3, seed=1)
            done.set()

        threading.Thread(target=alone, daemon=True).start()
        assert done.wait(60)
        assert step.round_stats["rounds"] == 2 and step.round_stats["max_round"] == 1
    finally:
        engine.close()


def test_a_slot_cancelled_while_waiting_does_not_hold_up_the_round(model):
    """A slot whose caller stops waiting (Ctrl-C) leaves with its turn unposted: the others' rounds go on."""
    from lis.util import cancel

    engine = BatchEngine(model, STOP)
    step = Lockstep(engine, 3)
    stopped = threading.Event()

    def waits_then_cancelled():
        with step.slot(0):
            try:
                step.generate([1, 2], 3, seed=0)  # slots 1 and 2 have not posted: it waits
            except cancel.Interrupted:
                stopped.set()

    try:
        t = threading.Thread(target=waits_then_cancelled, daemon=True)
        t.start()
        time.sleep(0.3)
        cancel.request()
        assert stopped.wait(10)
        t.join(10)
        cancel.reset()
        results = {}

        def other(s):
            with step.slot(s):
                results[s] = step.generate([1, 2, s], 3, seed=s)

        threads = [threading.Thread(target=other, args=(s,), daemon=True) for s in (1, 2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(20)
        assert set(results) == {1, 2} and step.round_stats["rounds"] == 1 and step.round_stats["max_round"] == 2
    finally:
        cancel.reset()
        engine.close()

"""BatchEngine on the random-init tiny Qwen3 (tests/models/conftest.py: mechanics, no trained weights):
concurrent calls batched into one forward pass per step give what the one-at-a-time sampler gives;
seeds, stop ids, limits, many threads, cancellation, errors.

Float note (measured here): a request alone in the engine, prefilled whole, is bit-identical to
lis.models.sampler.sample; after a cached prefix, or in a batch, the matrix products have more rows, so CPU BLAS rounds
differently (logits differ by up to ~5e-6, log-probs by ~5e-6). The greedy ids and the seeded draws
below are asserted equal; the log-probs within 1e-4.
"""
from __future__ import annotations

import copy
import threading
import time

import pytest
import torch

from lis.agent.tools.schemas import TOOLS
from lis.models import ContextLengthError, LocalHFModel, ModelError, Sampling
from lis.models.batch_engine import BatchEngine
from lis.models.sampler import sample
from lis.util import cancel
from tests.wait import wait_until

LP_TOL = 1e-4


@pytest.fixture(scope="module")
def prompts(random_model) -> list[list[int]]:
    """Real first turns of six math samples plus three short cuts of them: mixed lengths."""
    from lis.prompts import render_prompts
    from lis.tasks import load_samples

    full = [random_model.render(render_prompts(t, "sandbox"), TOOLS) for t in load_samples("math")[:6]]
    return full + [full[0][:7], full[1][:23], full[2][:61]]


def reference(model, prompt, n, stop_ids=frozenset(), seed=0, **kw):
    return sample(model, prompt, n, set(stop_ids), torch.Generator().manual_seed(seed), **kw)


def in_threads(fn, n: int) -> list:
    out: list = [None] * n
    errors: list = [None] * n

    def run(i):
        try:
            out[i] = fn(i)
        except BaseException as e:  # noqa: BLE001 - collected and checked by the test
            errors[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    return [e if e is not None else o for o, e in zip(out, errors)]


def assert_same(draw, ref):
    assert draw.ids == ref.ids and draw.stopped == ref.stopped
    assert max(abs(a - b) for a, b in zip(draw.logprobs, ref.logprobs)) < LP_TOL


def test_alone_it_computes_exactly_what_the_sampler_computes(random_model, prompts):
    # no kept prefix (a prefill split in two rounds differently: the prefix-cache tests below)
    with BatchEngine(random_model.model, random_model.stop_ids, prefix_cache_mb=0) as engine:
        for p in prompts[:3]:
            for kw in ({"temperature": 0}, {"temperature": 0.8, "top_p": 0.9, "top_k": 40, "repetition_penalty": 1.2}):
                ref = reference(random_model.model, p, 24, random_model.stop_ids, seed=5, **kw)
                got = engine.generate(p, 24, seed=5, **kw)
                assert (got.ids, got.logprobs, got.stopped) == (ref.ids, ref.logprobs, ref.stopped)


def test_concurrent_greedy_calls_are_batched_and_equal_the_sampler(random_model, prompts):
    """Nine prompts of 7..680 tokens at once; half end on a stop id, half run to 40 tokens. (A random
    model does not end its turn: each odd prompt stops on the model's stop ids plus the first id of its greedy
    draw, from the 25th on, that it has not drawn before.)"""
    free = [reference(random_model.model, p, 40, temperature=0).ids for p in prompts]
    stops = [random_model.stop_ids | {next(t for k, t in enumerate(free[i]) if k >= 24 and t not in free[i][:k])}
             if i % 2 else set() for i in range(len(prompts))]
    refs = [reference(random_model.model, p, 40, stops[i], temperature=0) for i, p in enumerate(prompts)]
    with BatchEngine(random_model.model, random_model.stop_ids, max_wait_s=0.5) as engine:
        got = in_threads(lambda i: engine.generate(prompts[i], 40, temperature=0, stop_ids=stops[i]), len(prompts))
        stats = dict(engine.stats)
    for g, r in zip(got, refs):
        assert_same(g, r)
    assert stats["max_rows"] == len(prompts)              # really one batch
    assert stats["steps"] < sum(len(r.ids) for r in refs) / 2
    assert any(r.stopped for r in refs) and any(not r.stopped for r in refs)


def test_late_requests_join_the_running_batch(random_model, prompts):
    """Continuous batching: requests that arrive while others decode join at the next step, both
    longer and shorter than the batch's current width, and leave it when done."""
    early, late = [prompts[6], prompts[7], prompts[1]], [prompts[3], prompts[8], prompts[0]]
    refs = [reference(random_model.model, p, 48, temperature=0) for p in early + late]
    with BatchEngine(random_model.model, set(), max_wait_s=0.5) as engine:
        results: list = [None] * 6

        def run(i, p):
            results[i] = engine.generate(p, 48, temperature=0)

        threads = [threading.Thread(target=run, args=(i, p)) for i, p in enumerate(early)]
        for t in threads:
            t.start()
        wait_until(lambda: engine.stats["steps"] >= 8, 60, "8 decode steps", interval=0.002)
        assert 8 <= engine.stats["steps"] < 48
        threads += [threading.Thread(target=run, args=(3 + i, p)) for i, p in enumerate(late)]
        for t in threads[3:]:
            t.start()
        for t in threads:
            t.join(timeout=300)
        stats = dict(engine.stats)
    for g, r in zip(results, refs):
        assert_same(g, r)
    assert stats["max_rows"] == 6 and stats["steps"] < 2 * 48


def test_seeded_sampling_is_reproducible_and_independent_of_the_batch(random_model, prompts):
    kw = {"temperature": 1.0, "top_p": 0.95, "top_k": 50}
    refs = [reference(random_model.model, prompts[i % 4], 32, seed=100 + i, **kw) for i in range(8)]
    with BatchEngine(random_model.model, set(), max_wait_s=0.2) as engine:
        runs = [in_threads(lambda i: engine.generate(prompts[i % 4], 32, seed=100 + i, **kw), 8) for _ in range(2)]
        other = engine.generate(prompts[0], 32, seed=999, **kw)
    for a, b, r in zip(runs[0], runs[1], refs):
        assert a.ids == b.ids == r.ids
        assert max(abs(x - y) for x, y in zip(a.logprobs, r.logprobs)) < LP_TOL
    assert other.ids != runs[0][0].ids                     # another seed, another draw
    assert len({tuple(d.ids) for d in runs[0][:4]}) == 4   # same prompt, different seeds


def test_a_generator_gives_a_reproducible_sequence_of_calls(random_model, prompts):
    with BatchEngine(random_model.model, set()) as engine:
        draws = [[engine.generate(prompts[0], 16, generator=g).ids for _ in range(3)]
                 for g in (torch.Generator().manual_seed(3), torch.Generator().manual_seed(3))]
    assert draws[0] == draws[1] and draws[0][0] != draws[0][1]


def test_a_next_turn_prefills_only_what_was_added_to_its_conversation(random_model, prompts):
    """The prefix cache: turn 2 (turn 1's prompt + its drawn ids + an environment reply) reuses turn 1's
    cache and prefills only the new tokens; it draws what a whole prefill draws (greedy ids equal,
    log-probs within rounding). A longer kept sequence replaces the one it extends; the budget holds;
    off by default (prefix_cache_mb=0); forget_prefixes drops what was kept."""
    reply = prompts[1][-30:]                      # some environment ids
    with BatchEngine(random_model.model, set(), prefix_cache_mb=256) as engine:
        first = engine.generate(prompts[0], 20, temperature=0)
        second_prompt = prompts[0] + first.ids + reply
        second = engine.generate(second_prompt, 20, temperature=0)
        stats = dict(engine.stats)
        store = engine._prefixes
        kept = store.keys()
    assert_same(second, reference(random_model.model, second_prompt, 20, temperature=0))
    assert stats["prefix_hits"] == 1 and stats["prefix_tokens"] == len(prompts[0]) + 19
    assert stats["prefill_tokens"] == len(prompts[0]) + (len(second_prompt) - len(prompts[0]) - 19)
    assert [len(k) for k in kept] == [len(second_prompt) + len(second.ids) - 1], (len(second_prompt), second.stopped)
    assert kept == [tuple(second_prompt + second.ids[:-1])]   # turn 1's entry was replaced by turn 2's
    assert second.ids == reference(random_model.model, second_prompt, 20, temperature=0).ids
    assert 0 < store.used <= store.budget

    with BatchEngine(random_model.model, set()) as engine:   # the default: off
        engine.generate(prompts[0], 20, temperature=0)
        engine.generate(second_prompt, 20, temperature=0)
        assert engine.stats["prefix_hits"] == 0 and len(engine._prefixes) == 0
        assert engine.stats["prefill_tokens"] == len(prompts[0]) + len(second_prompt)

    with BatchEngine(random_model.model, set(), prefix_cache_mb=256) as engine:   # weights changed: forgotten
        engine.generate(prompts[0], 20, temperature=0)
        engine.forget_prefixes()
        engine.generate(second_prompt, 20, temperature=0)
        assert engine.stats["prefix_hits"] == 0

    tiny = 2 * 2 * 2 * 16 * 4 * (len(prompts[0]) + 19) / (1 << 20) * 1.5   # room for about one sequence
    with BatchEngine(random_model.model, set(), prefix_cache_mb=tiny) as engine:
        for p in prompts[:3]:
            engine.generate(p, 20, temperature=0)
        assert len(engine._prefixes) == 1 and engine._prefixes.used <= engine._prefixes.budget


def test_a_new_episode_reuses_the_system_prompt_it_shares_with_an_earlier_one(random_model, prompts):
    """Two tasks' first turns share the system prompt and tool schemas: the second prefills only
    from where they differ, and draws what a whole prefill draws."""
    a, b = prompts[0], prompts[1]
    shared = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    assert shared > 100
    with BatchEngine(random_model.model, set(), prefix_cache_mb=256) as engine:
        engine.generate(a, 8, temperature=0)
        got = engine.generate(b, 8, temperature=0)
        stats = dict(engine.stats)
    assert stats["prefix_hits"] == 1 and stats["prefix_tokens"] == shared
    assert stats["prefill_tokens"] == len(a) + len(b) - shared
    assert_same(got, reference(random_model.model, b, 8, temperature=0))


def test_concurrent_agents_reuse_their_own_turns(random_model, prompts):
    """Eight conversations of three turns each, at once (a GRPO group): every later turn hits its own
    conversation's cache, and each conversation's draws equal the sampler's on the whole prompt."""
    reply = prompts[2][-25:]

    def conversation(i):
        prompt, draws = list(prompts[i % 4]), []
        for turn in range(3):
            d = engine.generate(prompt, 12, seed=1000 * i + turn, temperature=1.0)
            draws.append((list(prompt), d))
            prompt = prompt + d.ids + reply
        return draws

    with BatchEngine(random_model.model, set(), max_wait_s=0.2, prefix_cache_mb=256) as engine:
        got = in_threads(conversation, 8)
        stats = dict(engine.stats)
    # every later turn's prompt hits its conversation's cache (identical prompts admitted together —
    # two conversations that drew the same ids — share one prefill and so one hit)
    later = {tuple(prompt) for draws in got for prompt, _ in draws[1:]}
    assert len(later) <= stats["prefix_hits"] <= 24   # at most one per request
    for i, draws in enumerate(got):
        for turn, (prompt, d) in enumerate(draws):
            ref = reference(random_model.model, prompt, 12, seed=1000 * i + turn, temperature=1.0)
            assert_same(d, ref)


def test_stop_ids_and_max_new_tokens_are_honoured(random_model, prompts):
    ref = reference(random_model.model, prompts[0], 30, temperature=0)
    stop = ref.ids[9]
    first = ref.ids.index(stop)
    with BatchEngine(random_model.model, {stop}) as engine:
        d = engine.generate(prompts[0], 30, temperature=0)
        assert d.ids == ref.ids[:first + 1] and d.stopped and d.ids[-1] == stop
        d = engine.generate(prompts[0], 30, temperature=0, stop_ids=set())      # per-call override
        assert d.ids == ref.ids and not d.stopped
        d = engine.generate(prompts[0], 3, temperature=0, stop_ids=set())
        assert d.ids == ref.ids[:3] and not d.stopped and len(d.logprobs) == 3
        assert engine.generate(prompts[0], 0) .ids == []
        # mixed budgets in one batch: each sequence leaves at its own max_new_tokens
        got = in_threads(lambda i: engine.generate(prompts[i], 5 + 7 * i, temperature=0, stop_ids=set()), 4)
    assert [len(g.ids) for g in got] == [5, 12, 19, 26]


def test_many_threads_identical_prompts_share_their_prefill(random_model, prompts):
    """48 threads, 6 distinct prompts x 8 (GRPO groups), max_batch 16: all answered, each equal to
    its prompt's greedy reference, at most 16 sequences per step, one prefill per group."""
    refs = [reference(random_model.model, p, 20, temperature=0) for p in prompts[:6]]
    with BatchEngine(random_model.model, set(), max_batch=16, max_wait_s=0.2) as engine:
        got = in_threads(lambda i: engine.generate(prompts[i // 8], 20, temperature=0), 48)
        stats = dict(engine.stats)
    for i, g in enumerate(got):
        assert not isinstance(g, BaseException), g
        assert_same(g, refs[i // 8])
    assert stats["max_rows"] == 16
    assert stats["prefills"] + stats["shared_prefills"] == 48 and stats["shared_prefills"] > 0


def test_the_token_budget_caps_the_batch(random_model, prompts):
    p = prompts[0]
    budget = 3 * (len(p) + 20)
    with BatchEngine(random_model.model, set(), max_batch_tokens=budget, max_wait_s=0.2) as engine:
        got = in_threads(lambda i: engine.generate(p, 20, seed=i), 8)
        assert all(len(g.ids) == 20 for g in got)
        assert engine.stats["max_rows"] == 3
    with BatchEngine(random_model.model, set(), max_batch_tokens=10) as engine:   # larger than the budget: alone
        assert len(engine.generate(p, 5, temperature=0).ids) == 5


def test_cancellation_interrupts_every_waiting_caller(random_model, prompts):
    engine = BatchEngine(random_model.model, set())
    try:
        started = time.monotonic()
        results: list = []

        def run(i):
            try:
                engine.generate(prompts[i], 5000, temperature=1.0, seed=i)
                results.append("finished")
            except cancel.Interrupted:
                results.append(time.monotonic())

        threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        wait_until(lambda: engine.stats["steps"] >= 3, 60 - (time.monotonic() - started), "3 decode steps",
                   interval=0.005, fail=False)
        t_cancel = time.monotonic()
        cancel.request()
        for t in threads:
            t.join(timeout=30)
        assert len(results) == 4 and "finished" not in results
        assert max(results) - t_cancel < 2.0
        with pytest.raises(cancel.Interrupted):
            engine.generate(prompts[0], 4)
        wait_until(lambda: not engine._rows, 10, "the worker letting the sequences go", interval=0.01, fail=False)
        assert engine._rows == []
    finally:
        cancel.reset()
    assert len(engine.generate(prompts[0], 4, temperature=0).ids) == 4   # usable again
    engine.close()


def test_an_error_in_the_model_fails_its_callers_clearly_and_the_engine_goes_on(random_model, prompts):
    model = copy.deepcopy(random_model.model)
    engine = BatchEngine(model, set(), max_batch=3, max_wait_s=5.0)

    def broken_decode(module, args, kwargs):
        hidden = kwargs.get("hidden_states", args[0] if args else None)
        if hidden.shape[0] > 1:
            raise RuntimeError("injected failure in a batched step")

    hook = model.model.layers[1].register_forward_pre_hook(broken_decode, with_kwargs=True)
    got = in_threads(lambda i: engine.generate(prompts[i], 10, temperature=0), 3)
    for g in got:
        assert isinstance(g, ModelError), g
        assert "decode step failed" in str(g) and "injected failure" in str(g)
        assert "\n" not in str(g) and g.hint
    hook.remove()

    long = len(prompts[2])

    def broken_prefill(module, args, kwargs):
        hidden = kwargs.get("hidden_states", args[0] if args else None)
        if hidden.shape[1] == long:
            raise RuntimeError("injected prefill failure")

    hook = model.model.layers[0].register_forward_pre_hook(broken_prefill, with_kwargs=True)
    got = in_threads(lambda i: engine.generate(prompts[[0, 2, 1][i]], 10, temperature=0), 3)
    hook.remove()
    assert isinstance(got[1], ModelError) and "prefill of a" in str(got[1])
    assert got[0].ids == reference(model, prompts[0], 10, temperature=0).ids
    assert got[2].ids == reference(model, prompts[1], 10, temperature=0).ids
    engine.max_wait_s = 0.0
    assert len(engine.generate(prompts[2], 4, temperature=0).ids) == 4
    engine.close()


def test_bad_requests_and_a_closed_engine(random_model, prompts):
    engine = BatchEngine(random_model.model, set())
    for bad, words in (([], "empty prompt"), ([1, 10**7], "outside the vocabulary"), ([-1], "outside")):
        with pytest.raises(ModelError, match=words):
            engine.generate(bad, 4)
    with pytest.raises(ModelError, match="max_new_tokens"):
        engine.generate(prompts[0], -1)
    with pytest.raises(ModelError, match="invalid sampling"):
        engine.generate(prompts[0], 4, top_p=0)
    assert len(engine.generate(prompts[0], 4).ids) == 4
    engine.close()
    with pytest.raises(ModelError, match="closed"):
        engine.generate(prompts[0], 4)
    with pytest.raises(ModelError, match="max_batch"):
        BatchEngine(random_model.model, set(), max_batch=0)


def test_one_request_at_a_time_for_caches_it_cannot_merge(random_model, prompts):
    engine = BatchEngine(random_model.model, set())
    engine.batched = False  # what it does for linear-attention layers
    refs = [reference(random_model.model, p, 12, seed=i, temperature=0.9) for i, p in enumerate(prompts[:3])]
    got = in_threads(lambda i: engine.generate(prompts[i], 12, seed=i, temperature=0.9), 3)
    assert [g.ids for g in got] == [r.ids for r in refs] and engine.stats["steps"] == 0
    engine.close()


def test_an_unused_engine_lets_its_model_go(random_model):
    import gc
    import weakref

    engine = BatchEngine(copy.deepcopy(random_model.model), set())
    thread, ref = engine._thread, weakref.ref(engine)
    del engine
    gc.collect()
    thread.join(timeout=5)
    assert ref() is None and not thread.is_alive()


# -- LocalHFModel on the engine ---------------------------------------------------------------
def test_local_model_chat_from_8_threads_equals_sequential_calls(random_dir):
    from lis.prompts import render_prompts
    from lis.tasks import load_samples

    model = LocalHFModel.load(random_dir, device="cpu", seed=0)
    conversations = [render_prompts(t, "sandbox") for t in load_samples("math")[:8]]
    s = Sampling(temperature=0, max_tokens=48)
    sequential = [model.chat(c, TOOLS, s) for c in conversations]
    steps_before = model.engine.stats["steps"]
    parallel = in_threads(lambda i: model.chat(conversations[i], TOOLS, s), 8)
    for a, b in zip(sequential, parallel):
        assert not isinstance(b, BaseException), b
        assert (a.completion_ids, a.prompt_ids, a.message, a.finish_reason) == \
               (b.completion_ids, b.prompt_ids, b.message, b.finish_reason)
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs)) < LP_TOL
    assert model.engine.stats["max_rows"] > 1
    assert model.engine.stats["steps"] - steps_before < sum(len(a.completion_ids) for a in sequential)
    model.close()


def test_generate_ids_resolves_sampling_like_chat(random_model, prompt):
    ids = random_model.render(prompt, TOOLS)
    chat = random_model.chat(prompt, TOOLS, Sampling(temperature=0.7, max_tokens=32, seed=4))
    draw = random_model.generate_ids(ids, 32, Sampling(temperature=0.7, seed=4, max_tokens=2))
    assert (draw.ids, draw.logprobs) == (chat.completion_ids, chat.logprobs)
    model = copy.deepcopy(random_model.model)
    model.generation_config.do_sample = False   # the generation config says greedy
    m = LocalHFModel(model, random_model.tokenizer, seed=1, max_context=len(ids) + 5)
    assert m.generate_ids(ids, 32).ids == sample(model, ids, 5, m.stop_ids, torch.Generator(), temperature=0).ids
    with pytest.raises(ContextLengthError):
        LocalHFModel(model, random_model.tokenizer, max_context=len(ids)).generate_ids(ids, 4)
    m.close()


def test_a_params_entry_sets_the_batch_limits(random_dir):
    from lis.models import build_model

    m = build_model("t", {"backend": "local", "model": str(random_dir), "device": "cpu", "max_batch": 4,
                          "max_batch_tokens": 5000})
    assert (m.engine.max_batch, m.engine.max_batch_tokens) == (4, 5000)
    m.close()

"""``lis bench generate``: N generations one after the other (the plain sampler) vs the same N at once
through :class:`BatchEngine`, on the same model, prompts and seeds, in one run.

The prompts are the agent's real first turns; ``group=True`` gives every sequence the same prompt
(a GRPO group). Stop ids are ignored by default so both sides generate exactly ``max_new_tokens``;
``random_stops=k`` makes k random ids stop ids on both sides, so that sequences end early as real
turns do, which is what the engine's KV-cache budget (``max_batch_tokens``) is about.
"""
from __future__ import annotations

import statistics as st
import threading
import time
from typing import Any, Callable

import numpy as np
import torch

from lis.agent.tools.schemas import TOOLS
from lis.models.batch_engine import DEFAULT_MAX_BATCH_TOKENS, BatchEngine
from lis.models.local_hf import LocalHFModel
from lis.models.sampler import Draw, sample
from lis.prompts import render_prompts
from lis.tasks import load_samples


def bench_prompts(model: LocalHFModel, n: int, group: bool = False) -> list[list[int]]:
    """``n`` prompt-id lists: the math samples' first turns (cycled), or the first one ``n`` times."""
    tasks = load_samples("math")
    chosen = [tasks[0]] * n if group else [tasks[i % len(tasks)] for i in range(n)]
    return [model.render(render_prompts(t, "sandbox"), TOOLS) for t in chosen]


def at_once(n: int, one: Callable[[int], Draw]) -> tuple[list[Draw | None], list[str], float]:
    """``one(i)`` for i in 0..n-1 on n threads at once: the draws, the errors, the wall time."""
    draws: list[Draw | None] = [None] * n
    errors: list[str] = []

    def run(i: int) -> None:
        try:
            draws[i] = one(i)
        except Exception as e:  # noqa: BLE001 - reported in the result, not swallowed
            errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return draws, errors, time.perf_counter() - t0


def bench_generate(model: LocalHFModel, *, n: int = 16, max_new_tokens: int = 64, temperature: float = 1.0,
                   group: bool = False, honour_stop: bool = False, random_stops: int = 0, max_batch: int = 64,
                   max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
                   progress: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Sequential vs concurrent generation of the same ``n`` sequences (seeds 0..n-1)."""
    prompts = bench_prompts(model, n, group)
    stop_ids = set(model.stop_ids) if honour_stop else set()
    if random_stops:
        vocab = model.model.get_input_embeddings().num_embeddings
        stop_ids |= set(np.random.default_rng(0).choice(vocab, min(random_stops, vocab), replace=False).tolist())
    room = min(model.max_context - len(p) for p in prompts)
    max_new = max(1, min(max_new_tokens, room))

    progress("warm-up")
    sample(model.model, prompts[0][:32], 4, set(), torch.Generator().manual_seed(0), temperature=temperature)

    progress(f"{n} sequences one after the other")
    t0 = time.perf_counter()
    sequential = [sample(model.model, p, max_new, stop_ids, torch.Generator().manual_seed(i), temperature=temperature)
                  for i, p in enumerate(prompts)]
    seq_s = time.perf_counter() - t0

    progress(f"{n} sequences at once")
    engine = BatchEngine(model.model, stop_ids, max_batch=max_batch, max_batch_tokens=max_batch_tokens,
                         name=model.name)
    concurrent, errors, con_s = at_once(n, lambda i: engine.generate(prompts[i], max_new, temperature=temperature,
                                                                     seed=i))
    stats = dict(engine.stats)
    engine.close()

    seq_tokens = sum(len(d.ids) for d in sequential)
    con_tokens = sum(len(d.ids) for d in concurrent if d is not None)
    lengths = [len(p) for p in prompts]
    device = next(model.model.parameters()).device
    return {
        "model": model.name,
        "device": str(device),
        "parameters": sum(p.numel() for p in model.model.parameters()),
        "torch_threads": torch.get_num_threads(),
        "n": n,
        "max_new_tokens": max_new,
        "temperature": temperature,
        "same_prompt": group,
        "stop_ids": _stops_said(honour_stop, random_stops),
        "max_batch_tokens": max_batch_tokens,
        "prompt_tokens": {"min": min(lengths), "mean": round(st.mean(lengths), 1), "max": max(lengths)},
        "sequential": {"wall_s": round(seq_s, 3), "tokens": seq_tokens, "tokens_per_s": round(seq_tokens / seq_s, 1)},
        "concurrent": {"wall_s": round(con_s, 3), "tokens": con_tokens, "tokens_per_s": round(con_tokens / con_s, 1),
                       "decode_steps": stats["steps"], "max_batch": stats["max_rows"],
                       "mean_batch": round(stats["rows_stepped"] / max(1, stats["steps"]), 1),
                       "prefills": stats["prefills"], "shared_prefills": stats["shared_prefills"],
                       "preemptions": stats.get("preemptions", 0),
                       "recomputed_tokens": stats.get("recomputed_tokens", 0),
                       "max_positions": stats.get("max_positions")},
        "speedup": round(seq_s / con_s, 2),
        "identical_sequences": sum(1 for a, b in zip(sequential, concurrent) if b is not None and a.ids == b.ids),
        "errors": errors,
    }


def _stops_said(honour_stop: bool, random_stops: int) -> str:
    """What the result says about stop ids."""
    said = [s for s, on in (("the model's", honour_stop), (f"{random_stops} random ids", random_stops)) if on]
    return " + ".join(said) if said else "ignored (every sequence generates max_new_tokens)"

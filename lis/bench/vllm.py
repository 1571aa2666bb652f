"""vLLM beside lis's in-process engine, on the same model and prompts.

    with vllm_engine(model_dir, "float32", state_dir) as engine:     # a vLLM server of the set-up's venv
        bench_vllm_generate(model, engine, n=16)                      # tokens/s of both, and their ratio
        mismatch(model.model, engine, prompts, FULL_SAMPLING)         # the sampler against the trainer

``mismatch`` compares vLLM's sampling log-probabilities with the trainer's float32 recomputation of
the same ids (``log_softmax(logits / T)``, as TRL computes it), per token and per sequence: the
log-ratio a sequence-level importance-sampling correction sees.
"""
from __future__ import annotations

import contextlib
import math
import statistics as st
from pathlib import Path
from typing import Any, Callable, Iterator

import torch

from lis.bench.generate import at_once, bench_prompts
from lis.bench.serve import free_port
from lis.models.batch_engine import BatchEngine
from lis.models.local_hf import LocalHFModel
from lis.models.sampler import Draw
from lis.models.serve_plan import serving
from lis.models.vllm_tokens import VLLMTokenEngine

# the full profile's rollout sampling (T 1, no truncation) and Qwen3-Instruct's model card (generation_config.json)
FULL_SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": 0}
CARD_SAMPLING = {"temperature": 0.7, "top_p": 0.8, "top_k": 20}
VLLM_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_SERVER_DEV_MODE": "1"}


@contextlib.contextmanager
def vllm_engine(model_dir: Path, dtype: str, state_dir: Path, max_model_len: int = 4096,
                extra_args: list[str] | None = None) -> Iterator[VLLMTokenEngine]:
    """A vLLM server on ``model_dir`` (started as ``serve.auto`` starts one, stopped after) and the token
    engine on it (no stop ids: sequences run to their budget)."""
    port = free_port()
    name = f"bench-vllm-{dtype}"
    entry = {"backend": "openai", "model": name, "base_url": f"http://127.0.0.1:{port}/v1",
             "serve": {"auto": True, "model": str(Path(model_dir).resolve()), "max_model_len": max_model_len,
                       "startup_timeout_s": 900, "env": dict(VLLM_ENV),
                       "extra_args": ["--dtype", dtype, "--seed", "0", "--logprobs-mode", "processed_logprobs",
                                      *(extra_args or [])]}}
    with serving({name: entry}, [name], root=state_dir):
        with VLLMTokenEngine(entry["base_url"], name, api_key="EMPTY", stop_ids=set()) as engine:
            yield engine


def _side(draws: list[Draw | None], errors: list[str], wall: float) -> dict[str, Any]:
    tokens = sum(len(d.ids) for d in draws if d is not None)
    return {"wall_s": round(wall, 3), "tokens": tokens, "tokens_per_s": round(tokens / wall, 1), "errors": errors[:3]}


def bench_vllm_generate(model: LocalHFModel, engine: VLLMTokenEngine, *, n: int = 16, max_new_tokens: int = 64,
                        temperature: float = 1.0, group: bool = False,
                        progress: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """The same ``n`` sequences through the in-process batching engine and through vLLM (see the module doc)."""
    prompts = bench_prompts(model, n, group)
    max_new = max(1, min(max_new_tokens, min(model.max_context - len(p) for p in prompts)))
    progress("warm-up")
    engine.generate(prompts[0], 4, temperature=temperature, seed=0)
    local = BatchEngine(model.model, set(), name=model.name)
    local.generate(prompts[0][:32], 4, temperature=temperature, seed=0)
    progress(f"{n} sequences at once in this process")
    ours = _side(*at_once(n, lambda i: local.generate(prompts[i], max_new, temperature=temperature, seed=i)))
    local.close()
    progress(f"{n} sequences at once through vLLM")
    got = at_once(n, lambda i: engine.generate(prompts[i], max_new, temperature=temperature, seed=i))
    theirs = _side(*got)
    lengths = [len(p) for p in prompts]
    return {"model": model.name, "parameters": sum(p.numel() for p in model.model.parameters()),
            "torch_threads": torch.get_num_threads(), "n": n, "max_new_tokens": max_new,
            "temperature": temperature, "same_prompt": group,
            "prompt_tokens": {"min": min(lengths), "mean": round(st.mean(lengths), 1), "max": max(lengths)},
            "in_process": ours, "vllm": theirs,
            "vllm_over_in_process": round(theirs["tokens_per_s"] / ours["tokens_per_s"], 2)}


def trainer_logprobs(model: Any, ids: list[int], temperature: float) -> list[float]:
    """``log_softmax(logits / T)`` of each of ``ids[1:]`` in float32 (TRL's recomputation)."""
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].float()
    lp = torch.log_softmax(logits / temperature, -1)
    return lp[:-1].gather(1, torch.tensor(ids[1:])[:, None])[:, 0].tolist()


def mismatch(model: Any, engine: VLLMTokenEngine, prompts: list[list[int]], sampling: dict[str, Any],
             new_tokens: int = 64) -> dict[str, Any]:
    """vLLM's sampling log-probs against the trainer's float32 recomputation (see the module doc)."""
    t = float(sampling["temperature"])
    diffs: list[float] = []
    seqs: list[float] = []
    for i, p in enumerate(prompts):
        d = engine.generate(p, new_tokens, temperature=t, top_p=sampling.get("top_p"), top_k=sampling.get("top_k"),
                            seed=i)
        own = trainer_logprobs(model, p + d.ids, t)[len(p) - 1:]
        per = [a - b for a, b in zip(own, d.logprobs)]
        diffs += [abs(x) for x in per]
        seqs.append(sum(per))
    return {"sampling": dict(sampling), "sequences": len(seqs), "tokens": len(diffs),
            "token_abs_diff_mean": float(f"{st.mean(diffs):.3g}"), "token_abs_diff_max": float(f"{max(diffs):.3g}"),
            "seq_log_ratio_mean": float(f"{st.mean(seqs):.3g}"), "seq_log_ratio_min": float(f"{min(seqs):.3g}"),
            "seq_log_ratio_max": float(f"{max(seqs):.3g}"),
            "seq_ratio_min": float(f"{math.exp(min(seqs)):.3g}"),
            "seq_ratio_max": float(f"{math.exp(max(seqs)):.3g}")}

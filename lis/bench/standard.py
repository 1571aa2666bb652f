"""The benchmarks of `lis bench all` that live in lis.bench (lis/cli/bench.py ``SUITE`` lists them all).

Each takes a :class:`lis.bench.suite.Context`, returns ``{"numbers": ..., "checks": [...]}`` and
compares against a baseline measured in the same run.
"""
from __future__ import annotations

import json
import os
import statistics as st
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lis import layout
from lis import params as params_mod
from lis.bench.sandbox import bench_sandbox
from lis.bench.serve import bench_serve
from lis.bench.suite import Benchmark, Context, check
from lis.errors import LisError
from lis.models.local_hf import LocalHFModel
from lis.offline.base import build_base
from lis.offline.random_model import build_random
from lis.runtime import sandbox_config
from lis.sandbox import registry

RANDOM_32M = f"{layout.MODEL_CONFIGS_DIR}/qwen3-validate-32m.json"  # 32.5 M parameters (its vocabulary kept; the tiny tokenizer)


def tiny_base(ctx: Context) -> Path:
    """The offline tiny base (random weights, 0.36 M parameters), built once per run."""
    return ctx.shared("tiny", lambda p: build_base(p, seed=0, corpus_episodes=50))


def random_32m(ctx: Context) -> Path:
    """A random-init Qwen3 of qwen3-validate-32m.json's shape with the tiny tokenizer, built once per run."""
    tok = tiny_base(ctx)
    return ctx.shared("qwen3-32m", lambda p: build_random(p, ctx.root / RANDOM_32M, tokenizer_dir=tok, seed=0))


# -- sandboxes ---------------------------------------------------------------------------------------

def _sandbox(ctx: Context, backend: str) -> dict[str, Any]:
    cfg = sandbox_config(ctx.params(), run_id=f"bench-{registry.RUN_ID}", overrides={"backend": backend})
    res = bench_sandbox(cfg, n_echo=200, concurrent=64, commands=20, warm=4, n_memory=3, progress=ctx.progress)
    checks: list[dict[str, Any]] = []
    conc = res["concurrent"]
    check(checks, f"{conc['sandboxes']} concurrent sandboxes x {conc['commands_each']} commands: no error",
          conc["errors"] == 0, conc["first_errors"])
    if backend == "docker":
        check(checks, "execute_bash faster than a raw exec_run (the baseline)", res["speedup_vs_exec_run"] > 1,
              res["speedup_vs_exec_run"])
    return {"numbers": res, "checks": checks}


# -- the service -------------------------------------------------------------------------------------

def _serve(ctx: Context) -> dict[str, Any]:
    p = ctx.params()
    cfg = sandbox_config(p, run_id=f"bench-{registry.RUN_ID}")
    with tempfile.TemporaryDirectory(prefix="lis-bench-serve-") as tmp:
        res = bench_serve(Path(tmp), requests=64, concurrent=64, max_concurrent=64, sequential=5,
                          serve_args=["--profile", p.profile], sandbox_config=cfg, baseline=True,
                          progress=ctx.progress)
    checks: list[dict[str, Any]] = []
    check(checks, "no episode lost (each request answered with its own answer)", res["lost_episodes"] == 0,
          res["lost_episodes"])
    check(checks, "no sandbox left after the load or after SIGTERM", not any(res["sandboxes_left"].values()),
          res["sandboxes_left"])
    return {"numbers": res, "checks": checks}


# -- generation --------------------------------------------------------------------------------------

GENERATE_CASES = (  # (model, label, bench_generate's options)
    ("tiny", "16 distinct prompts", {"n": 16}),
    ("tiny", "64, one prompt (a GRPO group)", {"n": 64, "group": True}),
    ("tiny", "64, one prompt, turns ending early, the paper's KV budget",
     {"n": 64, "group": True, "max_new_tokens": 16384, "random_stops": 41, "max_batch_tokens": 131072}),
    ("qwen3-32m", "8 distinct prompts", {"n": 8, "max_new_tokens": 32}),
    ("qwen3-32m", "16, one prompt (a GRPO group)", {"n": 16, "group": True, "max_new_tokens": 32}),
)
SAME_IDS = 0.9  # at least this share of the engine's sequences are the sampler's, id for id (lis/models/batch_engine.py's module doc)


def _generate(ctx: Context) -> dict[str, Any]:
    import torch

    from lis.bench.generate import bench_generate  # lazy: loads torch; the other benchmarks' commands do not

    threads = torch.get_num_threads()
    torch.set_num_threads(1)   # as the smoke profile's trainers run: one thread beside other work
    try:
        dirs = {"tiny": tiny_base(ctx), "qwen3-32m": random_32m(ctx)}
        rows, checks = [], []
        for model_name, label, opts in GENERATE_CASES:
            ctx.progress(f"{model_name}: {label}")
            model = LocalHFModel.load(dirs[model_name], device="cpu", name=model_name)
            try:
                res = bench_generate(model, **opts)
            finally:
                model.close()
            rows.append({"model": model_name, "case": label, **res})
            check(checks, f"{model_name}, {label}: no error, at least {SAME_IDS:.0%} of the sequences the "
                  "sampler's id for id (a batch's float rounding may part one at a near-tie)",
                  res["identical_sequences"] >= SAME_IDS * res["n"] and not res["errors"],
                  {"identical": res["identical_sequences"], "n": res["n"], "errors": res["errors"][:2]})
    finally:
        torch.set_num_threads(threads)
    return {"numbers": {"torch_threads": 1, "cases": rows}, "checks": checks}


# -- vLLM -------------------------------------------------------------------------------------------

def _vllm(ctx: Context) -> dict[str, Any]:
    import torch

    from lis.bench.generate import bench_prompts
    from lis.bench.vllm import CARD_SAMPLING, FULL_SAMPLING, bench_vllm_generate, mismatch, vllm_engine

    model_dir = random_32m(ctx)
    model = LocalHFModel.load(model_dir, device="cpu", name="qwen3-32m")
    prompts = bench_prompts(model, 8)
    generate, rows, checks = [], [], []
    try:
        for dtype in ("float32", "bfloat16"):
            ctx.progress(f"vLLM in {dtype}: starting")
            with vllm_engine(model_dir, dtype, ctx.scratch / f"vllm-{dtype}") as engine:
                if dtype == "float32":
                    for label, opts in (("16 distinct prompts", {"n": 16}),
                                        ("16, one prompt (a GRPO group)", {"n": 16, "group": True})):
                        ctx.progress(f"vLLM in {dtype}: {label}")
                        res = bench_vllm_generate(model, engine, max_new_tokens=64, **opts)
                        generate.append({"case": label, **res})
                        check(checks, f"{label}: no error on either side",
                              not res["in_process"]["errors"] and not res["vllm"]["errors"],
                              [res["in_process"]["errors"], res["vllm"]["errors"]])
                for label, sampling in (("full profile", FULL_SAMPLING), ("model card", CARD_SAMPLING)):
                    ctx.progress(f"vLLM in {dtype}: mismatch at the {label}'s sampling")
                    rows.append({"vllm_dtype": dtype, "trainer_dtype": "float32", "settings": label,
                                 **mismatch(model.model, engine, prompts, sampling)})
    finally:
        model.close()
    full32 = next(r for r in rows if r["vllm_dtype"] == "float32" and r["settings"] == "full profile")
    check(checks, "vLLM in float32 at T 1: its log-probs are the trainer's (max |diff| < 1e-3 per token)",
          full32["token_abs_diff_max"] < 1e-3, full32["token_abs_diff_max"])
    return {"numbers": {"model": "qwen3-32m (random weights)", "torch_threads": torch.get_num_threads(),
                        "generate": generate, "mismatch": rows}, "checks": checks}


# -- command start-up --------------------------------------------------------------------------------

def _startup(ctx: Context) -> dict[str, Any]:
    from unittest import mock

    import yaml

    def mean_ms(fn, n: int = 10) -> float:
        fn()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return round((time.perf_counter() - t0) / n * 1000, 2)

    pfile = ctx.root / params_mod.PARAMS_FILE
    libyaml = hasattr(yaml, "CSafeLoader")
    fast = mean_ms(lambda: params_mod._load(pfile, ctx.root, "ci"))
    with mock.patch.object(yaml, "CSafeLoader", yaml.SafeLoader, create=True):
        slow = mean_ms(lambda: params_mod._load(pfile, ctx.root, "ci"))
    cached = mean_ms(lambda: params_mod.load(ctx.root, profile="ci"), n=100)
    walls = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from lis.cli import main; main()", "--help"], cwd=ctx.root,
                       capture_output=True, check=True, env={**os.environ, "PYTHONPATH": str(ctx.root)})
        walls.append(time.perf_counter() - t0)
    numbers = {"libyaml": libyaml, "params_load_ms": fast, "params_load_pure_python_ms": slow,
               "params_load_speedup": round(slow / fast, 2), "params_load_cached_ms": cached,
               "lis_help_process_s": {"median": round(st.median(walls), 3), "min": round(min(walls), 3), "n": 5}}
    checks: list[dict[str, Any]] = []
    check(checks, "libyaml's loader faster than the pure-Python one (the baseline)", fast < slow, numbers["params_load_speedup"])
    check(checks, "a cached load faster than a parse", cached < fast, cached)
    return {"numbers": numbers, "checks": checks}


# -- the GPU checks' code, on the CPU ---------------------------------------------------------------

GPU_CHECK = "scripts/gpu_check.py"
GPU_CHECK_ARGS = ["--grpo-steps", "2", "--sft-steps", "10"]
PAPER_ARGS = ["--config", f"{layout.MODEL_CONFIGS_DIR}/qwen3-rehearsal.json", "--prompt-tokens", "512",
              "--completion-tokens", "16"]


def gpu_check(root: Path, out: Path, args: list[str], timeout_s: float = 900) -> dict[str, Any]:
    """Run scripts/gpu_check.py on the CPU with ``args``; its JSON result (LisError with the stderr's
    last lines when it wrote none)."""
    cmd = [sys.executable, str(root / GPU_CHECK), "--device", "cpu", "--out", str(out), *args]
    r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout_s)
    if not out.is_file():
        tail = " | ".join(r.stderr.strip().splitlines()[-3:])[-400:]
        raise LisError(f"{GPU_CHECK} {' '.join(args)} wrote no result (exit {r.returncode}): {tail}")
    res = json.loads(out.read_text())
    res["exit_status"] = r.returncode
    return res


def self_test_checks(res: dict[str, Any], grpo_steps: int, sft_steps: int) -> list[dict[str, Any]]:
    """What the CPU self-test must show (every check ran and reported, CPU against CPU identical)."""
    checks: list[dict[str, Any]] = []
    check(checks, "the script exited 0", res.get("exit_status") == 0, res.get("exit_status"))
    for part in ("engine", "grpo", "sft"):
        check(checks, f"{part}: ran without an error", part in res and "error" not in res[part],
              res.get(part, {}).get("error"))
    eng, grpo, sft = res.get("engine", {}), res.get("grpo", {}), res.get("sft", {})
    check(checks, "engine: greedy and seeded sampled ids of every prompt identical (CPU against CPU)",
          eng.get("greedy_ids_equal") == eng.get("prompts") == eng.get("sampled_ids_equal") is not None,
          {k: eng.get(k) for k in ("prompts", "greedy_ids_equal", "sampled_ids_equal")})
    diff = eng.get("device_logprobs_vs_cpu_recompute_max_abs")
    check(checks, "engine: log-probabilities within 1e-4 of a CPU recomputation", diff is not None and diff < 1e-4, diff)
    steps = grpo.get("per_step", [])
    check(checks, f"grpo: steps 1..{grpo_steps} logged, no loss computed in eval mode",
          [s["step"] for s in steps] == list(range(1, grpo_steps + 1))
          and all(s["loss_calls_eval_mode"] == 0 for s in steps), [s.get("step") for s in steps])
    check(checks, "grpo: engine and trainer log-probabilities within 1e-4",
          bool(steps) and all(s["logprob_diff_max"] < 1e-4 for s in steps), [s.get("logprob_diff_max") for s in steps])
    loss = sft.get("loss") or {}
    check(checks, f"sft: {sft_steps} steps, the loss fell", sft.get("steps_done") == sft_steps
          and loss.get("final") is not None and loss["final"] < loss["first"],
          {"steps": sft.get("steps_done"), "first": loss.get("first"), "final": loss.get("final")})
    return checks


def paper_checks(res: dict[str, Any], prompt_tokens: int, completion_tokens: int) -> list[dict[str, Any]]:
    """What the paper-shape check's code must report on the CPU (the numbers are not judged: CPU RSS is
    a whole process's)."""
    p = res.get("paper", {})
    checks: list[dict[str, Any]] = []
    check(checks, "the script exited 0, no error", res.get("exit_status") == 0 and "error" not in p,
          p.get("error") or res.get("exit_status"))
    check(checks, "2 steps of the paper's 8 x 8 episodes, at the completion length asked",
          (p.get("steps"), p.get("episodes_per_step"), p.get("completion_tokens")) == (2, 64, completion_tokens),
          {k: p.get(k) for k in ("steps", "episodes_per_step", "completion_tokens")})
    lo, hi = int(prompt_tokens * 0.78), int(prompt_tokens * 1.17)
    check(checks, f"prompts of {lo}-{hi} tokens ({prompt_tokens} asked)",
          lo <= (p.get("prompt_tokens") or -1) <= hi, p.get("prompt_tokens"))
    check(checks, "a peak and its ratio to the plan reported",
          (p.get("peak_allocated_gb") or 0) > 0 and (p.get("peak_over_plan") or 0) > 0,
          {k: p.get(k) for k in ("peak_allocated_gb", "peak_over_plan")})
    gen, train = p.get("generation_tokens_per_s") or [], p.get("training_tokens_per_s") or []
    check(checks, "generation and training tokens per second of each step reported",
          len(gen) == 2 and len(train) == 2 and all(x > 0 for x in train), {"generation": gen, "training": train})
    check(checks, "no loss computed in eval mode", bool(p.get("per_step"))
          and all(s["loss_calls_eval_mode"] == 0 for s in p["per_step"]),
          [s.get("loss_calls_eval_mode") for s in p.get("per_step", [])])
    return checks


def _gpu_check(ctx: Context) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="lis-bench-gpu-") as tmp:
        ctx.progress("the CPU self-test (engine parity, 2 GRPO steps, 10 SFT steps)")
        t0 = time.monotonic()
        self_test = gpu_check(ctx.root, Path(tmp) / "check.json", GPU_CHECK_ARGS)
        self_test["wall_s"] = round(time.monotonic() - t0, 1)
        ctx.progress("the paper-shape check's code on the rehearsal's shape")
        t0 = time.monotonic()
        paper = gpu_check(ctx.root, Path(tmp) / "paper.json", ["--paper", *PAPER_ARGS])
        paper["wall_s"] = round(time.monotonic() - t0, 1)
    checks = [{**c, "check": f"self-test: {c['check']}"} for c in self_test_checks(self_test, 2, 10)]
    checks += [{**c, "check": f"paper shape: {c['check']}"} for c in paper_checks(paper, 512, 16)]
    return {"numbers": {"self_test": self_test, "paper_shape": paper}, "checks": checks}


BENCHMARKS = [
    Benchmark("sandbox-docker", "Docker sandboxes: our execute_bash round trip against a raw exec_run, start, "
              "warm-pool acquire, 64 at once, memory", lambda ctx: _sandbox(ctx, "docker"), 1.5),
    Benchmark("sandbox-bwrap", "bubblewrap sandboxes: round trip, start, warm-pool acquire, 64 at once",
              lambda ctx: _sandbox(ctx, "bwrap"), 1.0),
    Benchmark("serve", "lis serve under 64 requests at once against the same episodes in-process", _serve, 2.0),
    Benchmark("generate", "N generations one after the other (the plain sampler) against the same N at once "
              "through the batching engine", _generate, 4.0),
    Benchmark("vllm", "a vLLM server (the set-up's build) beside the in-process engine on the same model and "
              "prompts (tokens/s); its log-probs against the trainer's, float32 and bfloat16", _vllm, 5.0),
    Benchmark("startup", "params load with libyaml against PyYAML's pure-Python loader; a cached load; "
              "`lis --help` as a process", _startup, 0.3),
    Benchmark("gpu-check", "scripts/gpu_check.py on the CPU: the self-test and the paper-shape check's code "
              "(the shapes make test ran before)", _gpu_check, 1.5),
]

"""The checks a GPU makes possible, in one run (scripts/gpu-check.sh runs this; docs/training.md).

    python scripts/gpu_check.py --out gpu-check.json            # on a CUDA machine
    python scripts/gpu_check.py --device cpu --out self.json    # the same checks on the CPU (the self-test)

1. **Batch engine, CUDA vs CPU.** The tiny model (built offline here, fp32) on both devices: greedy
   continuations of the same prompts (ids equal unless two logits tie within float rounding), seeded
   sampled continuations (the same seed draws the same uniform numbers on both; ids equal where the
   devices' distributions agree to float rounding), and the log-probabilities the device engine reports
   for its own draws against a CPU recomputation of the same ids (max absolute difference).
2. **GRPO on the device.** 3 steps of ``lis.train.grpo.trainer.train_grpo`` (TRL GRPOTrainer, our
   rollout_func and checks) on the tiny model in vanilla mode (no Docker there): step times, and the
   per-step importance-sampling ratio and log-prob difference between the engine and TRL's loss
   recomputation, loss computations in eval mode (0).
3. **Lightning SFT on the device.** 60 steps of ``lis.train.sft.run.train_sft`` on scripted vanilla
   teacher episodes (no sandbox): time and losses.

``--paper`` (``scripts/gpu-check.sh paper``) runs instead the **paper-shape check**: a random-init
Qwen3-4B of the published shape (``data/model_configs/qwen3-4b-instruct-2507.json``, no weights
needed; the offline tiny tokenizer), bf16 mixed precision with gradient checkpointing on one GPU,
2 GRPO steps of the paper's 8 x 8 episodes in vanilla mode (no Docker there) at ``--prompt-tokens`` /
``--completion-tokens`` (defaults sized to finish inside the device tool's 10-minute limit); it reports
the measured peak GPU memory against ``lis train plan``'s estimate of the same run, and the tokens per
second of generation and of training.

With ``--vllm`` (``gpu-check.sh paper`` passes it) the paper-shape check adds a **vLLM step** when vLLM is
installed there (``scripts/setup.sh vllm``'s venv, ``$LIS_VLLM``, or ``vllm`` on PATH; else it says
"skipped"): the same random model served by vLLM in bf16 beside the in-process engine on the same
64 prompts of one group (tokens/s of each and the ratio), vLLM's log-probs against the trainer's
float32 recomputation at the full profile's sampling, and the time of one weight push (``sync: files``).

The sizes above are the defaults; the options shrink them (the test suite runs each check at the
smallest shape that still exercises it: tests/train/test_gpu_check.py). Every number lands in one JSON
file. Nothing here is timed for a verdict: it reports (`lis bench all` records it: its gpu-check).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def engine_parity(base: Path, device: str, n_prompts: int = 8, max_new: int = 48) -> dict:
    import torch

    from lis.models.local_hf import LocalHFModel
    from lis.prompts import render_prompts
    from lis.tasks import load_samples

    dev = LocalHFModel.load(base, name="dev", device=device, dtype="float32", seed=0)
    cpu = LocalHFModel.load(base, name="cpu", device="cpu", dtype="float32", seed=0)
    tasks = [t for d in ("math", "biomed", "long_context", "instruct_follow") for t in load_samples(d)[:2]][:n_prompts]
    prompts = [dev.render(render_prompts(t, "vanilla"))[-2000:] for t in tasks]
    out = {"prompts": len(prompts)}
    t0 = time.perf_counter()
    greedy_dev = [dev.engine.generate(p, max_new, temperature=0.0).ids for p in prompts]
    out["greedy_device_s"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    greedy_cpu = [cpu.engine.generate(p, max_new, temperature=0.0).ids for p in prompts]
    out["greedy_cpu_s"] = round(time.perf_counter() - t0, 3)
    out["greedy_ids_equal"] = sum(a == b for a, b in zip(greedy_dev, greedy_cpu))
    draws_dev = [dev.engine.generate(p, max_new, temperature=1.0, seed=100 + i) for i, p in enumerate(prompts)]
    draws_cpu = [cpu.engine.generate(p, max_new, temperature=1.0, seed=100 + i) for i, p in enumerate(prompts)]
    out["sampled_ids_equal"] = sum(a.ids == b.ids for a, b in zip(draws_dev, draws_cpu))
    out["sampled_tokens_before_first_difference"] = [
        next((k for k, (x, y) in enumerate(zip(a.ids, b.ids)) if x != y), min(len(a.ids), len(b.ids)))
        for a, b in zip(draws_dev, draws_cpu)]
    worst = 0.0
    with torch.no_grad():
        for p, d in zip(prompts, draws_dev):
            ids = torch.tensor([p + d.ids])
            logits = cpu.model(input_ids=ids).logits[0, len(p) - 1:len(p) - 1 + len(d.ids)].float()
            ref = torch.log_softmax(logits, -1)[torch.arange(len(d.ids)), torch.tensor(d.ids)]
            worst = max(worst, float((ref - torch.tensor(d.logprobs)).abs().max()))
    out["device_logprobs_vs_cpu_recompute_max_abs"] = worst
    dev.close()
    cpu.close()
    return out


def grpo_steps(base: Path, work: Path, steps: int = 3, prompts: int = 4, samples: int = 8) -> dict:
    from lis.agent import AgentConfig
    from lis.params import load
    from lis.tasks.schema import Task
    from lis.train.grpo.trainer import StepLog, train_grpo

    tasks = [Task(id=f"t{i}", domain="instruct_pretrain", problem_statement=f"What is the population of Town{i}?",
                  ground_truth=str(1000 + i), input_files={f"town{i}.txt": f"Town: Town{i}\nPopulation: {1000 + i}\n"},
                  qa_type="free-form") for i in range(8)]
    s = load(ROOT, profile="full").settings(  # the paper's recipe, generating in the training process
        "grpo", prompts_per_step=prompts, samples_per_prompt=samples, steps=steps, lr=1e-4, max_tokens_per_turn=32,
        max_turns=1, max_prompt_tokens=4096, max_episode_tokens=64, save_every=100, vllm={"mode": "none"})
    t0 = time.perf_counter()
    summary = train_grpo(base, tasks, work / "grpo", s, agent_cfg=AgentConfig(), pool=None, mode="vanilla",
                         ckpt_dir=work / "grpo-ckpt", log_path=work / "grpo-ckpt" / "steps.jsonl")
    rows = StepLog(work / "grpo-ckpt" / "steps.jsonl").rows()
    keep = ("step", "reward_mean", "loss", "step_s", "rollout_s", "is_ratio_min", "is_ratio_mean", "is_ratio_max",
            "logprob_diff_mean", "logprob_diff_max", "trained_tokens", "loss_calls", "loss_calls_eval_mode")
    return {"wall_s": round(time.perf_counter() - t0, 2), "steps": summary["steps"],
            "sampling": summary["sampling"], "per_step": [{k: r.get(k) for k in keep} for r in rows]}


def sft_steps(base: Path, work: Path, accelerator: str, steps: int = 60) -> dict:
    from lis.agent import AgentConfig
    from lis.models.scripted import ScriptedModel
    from lis.params import load
    from lis.train.sft.run import train_sft
    from lis.offline.teacher.run import run_teacher, scripted_item
    from lis.offline.teacher.tasks import sample_tasks

    rng = random.Random(0)
    tasks = [t for ts in sample_tasks().values() for t in ts][:24]
    items = [scripted_item(t, "vanilla", rng, "benchmark") for t in tasks]
    records = run_teacher(items, AgentConfig(), model_for=lambda it: ScriptedModel(it.replies, name="teacher"),
                          workers=4)
    s = load(ROOT, profile="full").settings("sft", steps=steps, batch_size=4, lr=5e-3, checkpoint_every=1000,
                                            held_out=0.1, seed=0, accelerator=accelerator, max_tokens=8192)
    t0 = time.perf_counter()
    m = train_sft(base, records, work / "sft", s, ckpt_dir=work / "sft-ckpt")
    return {"wall_s": round(time.perf_counter() - t0, 2), "steps_done": m["steps_done"], "loss": m["loss"],
            "records": len(records), "weights_sha256": m.get("weights_sha256")}


def paper_shape(work: Path, prompt_tokens: int, completion_tokens: int, steps: int = 2, device: str = "cuda",
                config: Path = ROOT / "data/model_configs/qwen3-4b-instruct-2507.json", out: dict | None = None) -> dict:
    """The paper-shape check (module doc): peak memory against the plan, tokens per second. On the CPU
    (``--device cpu``, with a small ``--config``) it runs the same code as a self-test; memory is then
    the process's peak RSS. ``out`` is filled as the check goes (the plan before training, each finished
    step after it), so a run stopped by an error or a time limit still reports what it measured."""
    import torch

    from lis.agent import AgentConfig
    from lis.params import load
    from lis.tasks.schema import Task
    from lis.train.grpo.trainer import StepLog, train_grpo
    from lis.train.plan import from_env, plan_stage, read_shape
    from lis.train.rollout.budget import first_prompt_ids
    from lis.offline.base import build_base
    from lis.offline.random_model import build_random
    from transformers import AutoTokenizer

    t0 = time.perf_counter()
    build_base(work / "tok", seed=0, corpus_episodes=50, stdlib_files=10)
    cuda = device == "cuda"
    built = build_random(work / "qwen3-4b", config, tokenizer_dir=work / "tok", seed=0,
                         dtype="bfloat16" if cuda else "float32", device=device)
    if cuda:
        torch.cuda.empty_cache()
    out = {} if out is None else out
    out.update({"model_config": str(Path(config).relative_to(ROOT)) if Path(config).is_relative_to(ROOT)
                else str(config), "model_params": built["params"], "build_s": round(time.perf_counter() - t0, 1)})
    tok = AutoTokenizer.from_pretrained(work / "tok")
    line = "The archive of the river town lists its markets, bridges, mills and their keepers by year."
    per_line = max(1, len(tok(line + "\n", add_special_tokens=False)["input_ids"]))

    def task(i: int, lines: int) -> Task:
        return Task(id=f"p{i}", domain="instruct_pretrain", problem_statement=f"How many mills are in town {i}?",
                    ground_truth=str(i), input_files={"archive.txt": "\n".join([line] * lines)}, qa_type="free-form")

    bare = len(first_prompt_ids(task(0, 1), tok, "vanilla", AgentConfig()))
    lines = max(1, (prompt_tokens - bare) // per_line + 1)
    tasks = [task(i, lines) for i in range(16)]
    prompt_len = len(first_prompt_ids(tasks[0], tok, "vanilla", AgentConfig()))
    s = load(ROOT, profile="full").settings(  # generating in the training process (vLLM: vllm_step)
        "grpo", vllm={"mode": "none"}, steps=steps, max_prompt_tokens=prompt_len + 16,
        max_tokens_per_turn=completion_tokens, max_episode_tokens=completion_tokens, max_turns=1, save_every=1000,
        precision={"bf16": cuda, "gradient_checkpointing": True}, threads=0 if cuda else 2,
        checkpoints={"keep": 1, "optimizer": False})  # the end-of-run checkpoint, weights only: a 64 GB disk
    # holds the model (bf16), that checkpoint and the trained model (float32 master weights), not AdamW's moments
    shape = read_shape(work / "qwen3-4b")
    capacity = torch.cuda.get_device_properties(0).total_memory / 1e9 if cuda else 24.0
    estimate = plan_stage(shape, "grpo", s, from_env({}, capacity_gb=capacity, device=device)).as_dict()
    out.update({
        "prompt_tokens": prompt_len, "completion_tokens": completion_tokens, "episodes_per_step": s.group_batch,
        "plan": {k: estimate[k] for k in ("peak_gb", "peak_phase", "phases_gb", "margin_gb", "dtypes")},
        "plan_terms_gb": {t["key"]: t["gpu_gb"] for t in estimate["terms"] if t["counted"]}})
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    try:
        summary = train_grpo(work / "qwen3-4b", tasks, work / "grpo", s, agent_cfg=AgentConfig(), pool=None,
                             mode="vanilla", ckpt_dir=work / "grpo-ckpt",
                             log_path=work / "grpo-ckpt" / "steps.jsonl")
        out["steps"] = summary["steps"]
    finally:  # what was measured, also when training stopped early
        _measured(out, StepLog(work / "grpo-ckpt" / "steps.jsonl").rows(), time.perf_counter() - t0, prompt_len,
                  estimate["peak_gb"], cuda)
    return out


def _measured(out: dict, rows: list[dict], wall: float, prompt_len: int, est_total: float, cuda: bool) -> None:
    import resource

    import torch

    if cuda:
        peak = torch.cuda.max_memory_allocated() / 1e9      # GB = 10^9 bytes, as lis train plan
        reserved = torch.cuda.max_memory_reserved() / 1e9
    else:  # the process's high-water mark (the whole process: interpreter, libraries, both model copies)
        peak = reserved = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
    gen_tokens = [r["episodes"] * r["episode_tokens_mean"] for r in rows]
    train_tokens = [r["episodes"] * (prompt_len + r["episode_tokens_mean"]) for r in rows]
    out.update({
        "steps_logged": len(rows), "wall_s": round(wall, 1),
        "peak_allocated_gb": round(peak, 2), "peak_reserved_gb": round(reserved, 2),
        "peak_over_plan": round(peak / est_total, 3) if est_total else None,
        "generation_tokens_per_s": [round(t / r["rollout_s"], 1) for t, r in zip(gen_tokens, rows)],
        "training_tokens_per_s": [round(t / max(1e-9, r["step_s"] - r["rollout_s"]), 1)
                                  for t, r in zip(train_tokens, rows)],
        "per_step": [{k: r.get(k) for k in ("step", "rollout_s", "step_s", "loss_value", "grad_norm",
                                            "is_ratio_min", "is_ratio_max", "outcomes", "loss_calls_eval_mode")}
                     for r in rows]})


def vllm_step(work: Path, device: str, config: Path, completion_tokens: int, group: int = 64) -> dict:
    """The vLLM step of the paper-shape check (module doc)."""
    from lis.models import vllm_program

    if not vllm_program.available():
        return {"skipped": "vLLM is not installed here (scripts/setup.sh vllm, $LIS_VLLM or vllm on PATH)"}
    import torch

    from lis.bench.generate import bench_prompts
    from lis.bench.vllm import FULL_SAMPLING, bench_vllm_generate, mismatch, vllm_engine
    from lis.models.local_hf import LocalHFModel
    from lis.offline.base import build_base
    from lis.offline.random_model import build_random
    from lis.params import load
    from lis.train.grpo.vllm_server import ServerMode

    if not (work / "tok").is_dir():
        build_base(work / "tok", seed=0, corpus_episodes=50, stdlib_files=10)
    build_random(work / "vllm-model", config, tokenizer_dir=work / "tok", seed=0,
                 dtype="bfloat16" if device == "cuda" else "float32", device="cpu")
    model = LocalHFModel.load(work / "vllm-model", device=device, name="random")
    out: dict = {"build": vllm_program.program(), "cpu_build": vllm_program.cpu_build()}
    extra = ["--gpu-memory-utilization", "0.4"] if device == "cuda" else []
    with vllm_engine(work / "vllm-model", "bfloat16", work / "vllm-serve", extra_args=extra) as engine:
        out["generate"] = bench_vllm_generate(model, engine, n=group, max_new_tokens=completion_tokens, group=True)
        trainer = model.model.float()
        out["mismatch_bf16_vs_fp32"] = mismatch(trainer, engine, bench_prompts(model, 4), FULL_SAMPLING, 32)
        served = load(ROOT, profile="full").settings("grpo", vllm={"mode": "server", "base_url": engine.base_url[:-3],
                                                                   "sync": "files", "command": None})
        mode = ServerMode.from_settings(served.vllm)
        t0 = time.perf_counter()
        mode.push_weights(trainer, work / "pushed")
        out["push_s"] = round(time.perf_counter() - t0, 2)
    model.close()
    if device == "cuda":
        torch.cuda.empty_cache()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", help="cuda (default) | cpu (the self-test)")
    ap.add_argument("--out", type=Path, default=Path("gpu-check.json"))
    ap.add_argument("--grpo-steps", type=int, default=3)
    ap.add_argument("--grpo-group", default="4x8", help="GRPO's prompts x samples per step (default 4x8)")
    ap.add_argument("--sft-steps", type=int, default=60)
    ap.add_argument("--engine-prompts", type=int, default=8, help="prompts of the engine parity check")
    ap.add_argument("--engine-tokens", type=int, default=48, help="tokens generated per prompt there")
    ap.add_argument("--corpus-episodes", type=int, default=100, help="the tiny base's tokenizer corpus (episodes)")
    ap.add_argument("--paper", action="store_true", help="the paper-shape check (random Qwen3-4B) instead")
    ap.add_argument("--vllm", action="store_true", help="--paper: also the vLLM step (when vLLM is installed)")
    ap.add_argument("--prompt-tokens", type=int, default=4096)
    ap.add_argument("--completion-tokens", type=int, default=512)
    ap.add_argument("--config", type=Path, default=ROOT / "data/model_configs/qwen3-4b-instruct-2507.json",
                    help="--paper: the model's shape (a smaller one makes --device cpu a self-test)")
    args = ap.parse_args()
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("gpu-check: no CUDA device here (torch.cuda.is_available() is False); --device cpu runs the "
              "self-test", file=sys.stderr)
        return 2
    if args.device == "cpu":  # make every stage below run on the CPU, as it would on a machine without CUDA
        os.environ["CUDA_VISIBLE_DEVICES"] = ""

    def stopped(signum, frame):  # a time limit (timeout's SIGTERM): the check in progress ends with what it has
        raise TimeoutError("stopped by SIGTERM (a time limit)")

    signal.signal(signal.SIGTERM, stopped)
    result = {"device": args.device, "python": platform.python_version(), "torch": torch.__version__,
              "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0) if args.device == "cuda" else None,
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if args.paper:
        with tempfile.TemporaryDirectory(prefix="lis-gpu-paper-") as tmp:
            result["paper"] = {}
            try:
                paper_shape(Path(tmp), args.prompt_tokens, args.completion_tokens, device=args.device,
                            config=args.config, out=result["paper"])
            except Exception as e:  # noqa: BLE001 - report what failed with what was measured
                result["paper"]["error"] = f"{type(e).__name__}: {' '.join(str(e).split())[:600]}"
            args.out.write_text(json.dumps(result, indent=1) + "\n")
            if args.vllm and not result["paper"].get("error", "").startswith("TimeoutError"):
                try:
                    result["vllm"] = vllm_step(Path(tmp), args.device, args.config, args.completion_tokens)
                except Exception as e:  # noqa: BLE001 - report what failed with what was measured
                    result["vllm"] = {"error": f"{type(e).__name__}: {' '.join(str(e).split())[:600]}"}
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps(result, indent=1))
        return 1 if "error" in result["paper"] or "error" in result.get("vllm", {}) else 0
    with tempfile.TemporaryDirectory(prefix="lis-gpu-check-") as tmp:
        work = Path(tmp)
        from lis.offline.base import build_base

        t0 = time.perf_counter()
        build_base(work / "base", seed=0, corpus_episodes=args.corpus_episodes, stdlib_files=20)
        result["build_base_s"] = round(time.perf_counter() - t0, 2)
        prompts, samples = (int(x) for x in args.grpo_group.split("x"))
        for name, fn in (("engine", lambda: engine_parity(work / "base", args.device, args.engine_prompts,
                                                          args.engine_tokens)),
                         ("grpo", lambda: grpo_steps(work / "base", work, args.grpo_steps, prompts, samples)),
                         ("sft", lambda: sft_steps(work / "base", work, "gpu" if args.device == "cuda" else "cpu",
                                                   args.sft_steps))):
            t0 = time.perf_counter()
            try:
                result[name] = fn()
            except Exception as e:  # noqa: BLE001 - one failed check still reports the others
                result[name] = {"error": f"{type(e).__name__}: {' '.join(str(e).split())[:400]}"}
            print(f"gpu-check: {name} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            args.out.write_text(json.dumps(result, indent=1) + "\n")   # what is done survives a time limit
            if isinstance(result[name], dict) and result[name].get("error", "").startswith("TimeoutError"):
                break
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 1 if any("error" in result.get(k, {}) for k in ("engine", "grpo", "sft")) else 0


if __name__ == "__main__":
    sys.exit(main())

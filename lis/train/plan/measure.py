"""The plan's estimate against the peak memory of real training steps on the CPU, each in a fresh process.

    lis train plan --measure data/models/base                 # every case below, a table
    rows = measure_model("data/models/base")                  # the same, as dicts
    calibrate(work)                                           # both models, with checks (`lis bench all`'s plan)
    python -m lis.train.plan.measure --child '<json spec>'    # one case (what measure_case starts)

Cases (:func:`default_cases`; fp32, two optimizer steps so the second runs beside the optimizer state;
checkpointing on and off): ``grpo`` — a real CheckedGRPOTrainer built as ``train_grpo`` builds it, fed
synthetic episodes (``padded``: two of unequal length in one micro-batch); ``sft`` — ``batch_loss`` with
SFTModule's optimizer, as Lightning steps it.

Measured: the peak resident memory (``VmHWM``, reset through ``/proc/self/clear_refs``) during the steps
minus the resident memory just before them (weights loaded into memory, trainer built, garbage
collected). :data:`CHILD_ENV` makes glibc return freed memory at once, so RSS follows live memory.
Compared: the plan's peak without margin, less its weights.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lis import layout
from lis.errors import LisError
from lis.params import load as load_params
from lis.train.grpo.trainer import rollout_output, sandbox_reward
from lis.train.plan.memory import GB, Workload, estimate
from lis.train.plan.setups import Setup
from lis.train.plan.shapes import read_shape

CHILD_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "0", "CUDA_VISIBLE_DEVICES": "",
             "HF_HUB_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1", "TOKENIZERS_PARALLELISM": "false"}


def default_cases(tokens: int) -> list[dict[str, Any]]:
    """The cases of one model at ``tokens`` positions per sequence (module doc)."""
    prompt = tokens // 4
    grpo = {"stage": "grpo", "rows": 1, "prompt": prompt, "completion": tokens - prompt}
    sft_rows = 2 if tokens <= 4096 else 1
    labelled = min(tokens - 1, 4096 // sft_rows)
    sft = {"stage": "sft", "rows": sft_rows, "tokens": tokens, "labelled": labelled}
    padded = {**grpo, "rows": 2, "padded": True}   # two episodes of unequal length in one micro-batch
    return [{**grpo, "checkpointing": False, "padded": False}, {**grpo, "checkpointing": True, "padded": False},
            {**padded, "checkpointing": False}, {**padded, "checkpointing": True},
            {**sft, "checkpointing": False}, {**sft, "checkpointing": True}]


def auto_tokens(model_dir: Path) -> int:
    """Positions per sequence so that activations and logits dominate the fixed state and a case stays
    short on a few CPU cores: more for smaller models."""
    p = read_shape(model_dir).params
    return 8192 if p < 5e6 else (1024 if p < 1e8 else 256)


def estimate_case(model_dir: Path, case: dict[str, Any]) -> dict[str, float]:
    """The plan of ``case`` (fp32, CPU, one process): its peak without the margin, its weights, and what the
    measurement compares with (the peak less the weights)."""
    shape = read_shape(model_dir)
    if case["stage"] == "grpo":
        tokens = case["prompt"] + case["completion"]
        w = Workload(stage="grpo", rows=case["rows"], tokens=tokens, completion=case["completion"], labelled=0,
                     group_batch=2 * case["rows"], bf16=False, checkpointing=case["checkpointing"], device="cpu",
                     padded=case["padded"], optimizer="fused")
    else:
        w = Workload(stage="sft", rows=case["rows"], tokens=case["tokens"], completion=0,
                     labelled=case["rows"] * case["labelled"], group_batch=case["rows"], bf16=False,
                     checkpointing=case["checkpointing"], device="cpu", optimizer="default")
    setup = Setup(name="cpu", device="cpu", capacity_gb=float("inf"))
    plan = estimate(shape, w, setup)
    bare = max(v - plan.margin[k] for k, v in plan.phases.items())
    weights = plan.term("weights").gpu
    return {"peak_gb": bare / GB, "weights_gb": weights / GB, "compared_gb": (bare - weights) / GB,
            "phase": plan.peak_phase}


def measure_case(model_dir: Path, case: dict[str, Any], *, threads: int = 2, steps: int = 2,
                 timeout_s: float = 600) -> dict[str, Any]:
    """Run ``case`` in a fresh process and return the estimate beside the measured peak. Raises LisError
    when the child fails (its last lines in the message)."""
    spec = {**case, "model": str(Path(model_dir).resolve()), "threads": threads, "steps": steps}
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, **CHILD_ENV, "OMP_NUM_THREADS": str(threads),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH", "")]))}
    cmd = [sys.executable, "-m", "lis.train.plan.measure", "--child", json.dumps(spec)]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s, cwd=root)
    except subprocess.TimeoutExpired:
        raise LisError(f"measuring {case['stage']} took over {timeout_s:.0f} s", "measure shorter sequences "
                       "(--measure-tokens)") from None
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = " | ".join((r.stderr or r.stdout).strip().splitlines()[-3:])[-400:]
        raise LisError(f"the {case['stage']} measurement failed (exit {r.returncode}): {tail}",
                       "run it alone: python -m lis.train.plan.measure --child '<spec>'")
    got = json.loads(lines[-1])
    est = estimate_case(Path(model_dir), case)
    return {**case, "model": Path(model_dir).name, "estimate_gb": round(est["compared_gb"], 4),
            "measured_gb": round(got["measured_gb"], 4), "ratio": round(est["compared_gb"] / got["measured_gb"], 3),
            "baseline_gb": round(got["baseline_gb"], 3), "plan_phase": est["phase"],
            "wall_s": round(time.perf_counter() - t0, 1), "steps_s": got["steps_s"]}


def measure_model(model_dir: Path, *, tokens: int | None = None, stages: tuple[str, ...] = ("grpo", "sft"),
                  threads: int = 2, progress=None) -> list[dict[str, Any]]:
    """Every case of :func:`default_cases` for ``model_dir`` (a model folder with its tokenizer)."""
    tokens = tokens or auto_tokens(model_dir)
    out = []
    for case in (c for c in default_cases(tokens) if c["stage"] in stages):
        out.append(measure_case(model_dir, case, threads=threads))
        if progress:
            progress(out[-1])
    return out


CALIBRATION_MODELS = ("tiny", "qwen3-validate-32m")   # the offline tiny base; a random Qwen3 of 32.5 M parameters
TOLERANCE = 0.25                                        # the estimate within ±25 % of the measured peak


def _check(checks: list[dict[str, Any]], name: str, ok: bool, value: Any) -> None:
    checks.append({"check": name, "ok": bool(ok), "value": value})


def model_checks(name: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What one model's measured cases must show: all six measured, every estimate within
    :data:`TOLERANCE` of its peak, checkpointing lowering the GRPO peak, a padded micro-batch raising it."""
    checks: list[dict[str, Any]] = []
    key = lambda r: (r["stage"], r["checkpointing"], r.get("padded", False))  # noqa: E731
    want = {key(c) for c in default_cases(1024)}
    _check(checks, f"{name}: the six cases measured (GRPO and SFT, checkpointing on and off, GRPO padded)",
           {key(r) for r in rows} == want and len(rows) == len(want), sorted(map(list, map(key, rows))))
    _check(checks, f"{name}: every estimate within ±{TOLERANCE:.0%} of the measured peak",
           all(1 - TOLERANCE <= r["ratio"] <= 1 + TOLERANCE for r in rows), [r["ratio"] for r in rows])
    by = {key(r): r["measured_gb"] for r in rows}
    if {("grpo", False, False), ("grpo", True, False), ("grpo", False, True)} <= set(by):
        _check(checks, f"{name}: checkpointing lowers the measured GRPO peak",
               by[("grpo", True, False)] < by[("grpo", False, False)],
               [by[("grpo", True, False)], by[("grpo", False, False)]])
        _check(checks, f"{name}: a padded micro-batch raises it (its masks)",
               by[("grpo", False, True)] > by[("grpo", False, False)],
               [by[("grpo", False, True)], by[("grpo", False, False)]])
    return checks


def calibrate(work: Path, *, threads: int = 2, progress=None) -> dict[str, Any]:
    """The plan against measured peaks on :data:`CALIBRATION_MODELS`, built into ``work``: every case of
    each, and :func:`model_checks` (``{"numbers": {"rows", "table"}, "checks"}``: `lis bench all`'s plan)."""
    from lis.offline.base import build_base  # lazy: the models are built only when calibrating
    from lis.offline.random_model import build_random  # lazy: as above

    root = Path(__file__).resolve().parents[3]
    tiny, big = work / CALIBRATION_MODELS[0], work / CALIBRATION_MODELS[1]
    build_base(tiny, seed=0, corpus_episodes=50)
    build_random(big, root / layout.MODEL_CONFIGS_DIR / "qwen3-validate-32m.json", tokenizer_dir=tiny, seed=0)
    rows, checks = [], []
    for name, folder in ((CALIBRATION_MODELS[0], tiny), (CALIBRATION_MODELS[1], big)):
        got = measure_model(folder, threads=threads, progress=progress)
        rows += got
        checks += model_checks(name, got)
    return {"numbers": {"rows": rows, "table": render(rows)}, "checks": checks}


def render(rows: list[dict[str, Any]]) -> str:
    """The measurements as a table: case, estimate, measured, ratio."""
    head = ["model", "stage", "tokens", "checkpointing", "padded", "estimate GB", "measured GB", "ratio", "step s"]
    body = []
    for r in rows:
        toks = (f"{r['rows']}x{r['prompt'] + r['completion']}" if r["stage"] == "grpo"
                else f"{r['rows']}x{r['tokens']} ({r['rows'] * r['labelled']} labelled)")
        body.append([r["model"], r["stage"], toks, "on" if r["checkpointing"] else "off",
                     "yes" if r.get("padded") else "no", f"{r['estimate_gb']:.3f}", f"{r['measured_gb']:.3f}",
                     f"{r['ratio']:.2f}", f"{r['steps_s']:.1f}"])
    widths = [max(len(x[c]) for x in [head] + body) for c in range(len(head))]
    fmt = lambda r: "| " + " | ".join(x.ljust(wd) if c < 5 else x.rjust(wd)  # noqa: E731
                                      for c, (x, wd) in enumerate(zip(r, widths))) + " |"
    return "\n".join([fmt(head), "|" + "|".join("-" * (wd + 2) for wd in widths) + "|"] + [fmt(r) for r in body])


# -- the child ------------------------------------------------------------------------------------


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {key} in /proc/self/status")


def _settle() -> int:
    """Collect garbage, hand the heap's free memory back, and return the resident bytes."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    return _status("VmRSS")


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def _resident(model: Any) -> None:
    """Copy the weights into the process's own memory: transformers maps a safetensors file, so without
    this the weights would become resident during the steps and join the measured peak."""
    import torch

    with torch.no_grad():
        for p in model.parameters():
            p.data = p.data.clone()


def _grpo(spec: dict[str, Any]) -> tuple[int, int, float]:
    import tempfile
    from types import SimpleNamespace

    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig

    # lazy: loads trl, peft, transformers, torch; importing this module does not
    from lis.train.grpo.checked_trainer import CheckedGRPOTrainer

    model = Path(spec["model"])
    P, C, rows, steps = spec["prompt"], spec["completion"], spec["rows"], spec["steps"]
    tokenizer = AutoTokenizer.from_pretrained(model)
    vocab = len(tokenizer)
    gen = torch.Generator().manual_seed(0)
    group = 2 * rows

    def episode(k: int) -> SimpleNamespace:
        short = spec["padded"] and k == 1         # one shorter episode: the micro-batch it lands in is padded
        p, c = (P - P // 8, C - C // 8) if short else (P, C)
        ids = torch.randint(5, vocab, (p + c,), generator=gen).tolist()
        sample = {"prompt_ids": ids[:p], "completion_ids": ids[p:], "logprobs": [-1.0] * c, "env_mask": [1] * c}
        return SimpleNamespace(sample=sample, reward=float(k % 2), error=None)

    def rollout_func(prompts: list, trainer) -> dict[str, list]:
        episodes = [episode(k) for k in range(len(prompts))]
        trainer.step_norms = {"sequences": len(episodes), "tokens": sum(sum(e.sample["env_mask"]) for e in episodes)}
        return rollout_output(episodes)

    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": f"task {i}"}], "task_id": f"t{i}"}
                                 for i in range(4)])
    with tempfile.TemporaryDirectory(prefix="lis-plan-measure-") as tmp:
        args = GRPOConfig(
            output_dir=tmp, max_steps=steps, per_device_train_batch_size=rows,
            gradient_accumulation_steps=group // rows,
            num_generations=group, learning_rate=1e-6, lr_scheduler_type="constant", warmup_steps=0,
            weight_decay=0.01, max_grad_norm=1.0, epsilon=0.2, epsilon_high=0.28, beta=0.0, scale_rewards="none",
            loss_type="dr_grpo", num_iterations=1, temperature=1.0, top_p=1.0, top_k=0, repetition_penalty=1.0,
            max_completion_length=C, mask_truncated_completions=False, logging_steps=1, save_strategy="no",
            seed=0, data_seed=0, use_cpu=True, bf16=False, gradient_checkpointing=spec["checkpointing"],
            report_to="none", disable_tqdm=True, log_completions=False, shuffle_dataset=True,
            remove_unused_columns=False, dataloader_num_workers=0)
        trainer = CheckedGRPOTrainer(model=str(model), reward_funcs=[sandbox_reward], args=args, train_dataset=dataset,
                                     processing_class=tokenizer, rollout_func=rollout_func)
        # the loss lis trains with, the paper's settings (micro-batches trimmed of padding)
        trainer.loss_settings = load_params(profile="full").settings("grpo")
        _resident(trainer.model)
        base = _settle()
        _reset_peak()
        t0 = time.perf_counter()
        trainer.train()
        took = time.perf_counter() - t0
        peak = _status("VmHWM")
    return base, peak, took


def _sft(spec: dict[str, Any]) -> tuple[int, int, float]:
    import torch
    from transformers import AutoModelForCausalLM

    # lazy: loads torch; importing this module does not
    from lis.train.sft.data import IGNORE, Example, batch_loss
    # lazy: loads pytorch_lightning, transformers, torch; importing this module does not
    from lis.train.sft.module import SFTModule

    model = AutoModelForCausalLM.from_pretrained(spec["model"], dtype=torch.float32)
    model.train()
    if spec["checkpointing"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    T, L, rows, steps = spec["tokens"], spec["labelled"], spec["rows"], spec["steps"]
    vocab = model.get_output_embeddings().weight.shape[0]
    gen = torch.Generator().manual_seed(0)
    batch = []
    for _ in range(rows):
        ids = torch.randint(5, vocab, (T,), generator=gen).tolist()
        batch.append(Example(ids, [IGNORE] * (T - L) + ids[T - L:]))
    module = SFTModule(model, lr=1e-5, total_steps=steps, warmup_steps=1, weight_decay=0.0)
    opt = module.configure_optimizers()["optimizer"]
    _resident(model)
    base = _settle()
    _reset_peak()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = batch_loss(model, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del loss
    took = time.perf_counter() - t0
    return base, _status("VmHWM"), took


def _child(spec: dict[str, Any]) -> None:
    import torch

    torch.set_num_threads(int(spec.get("threads", 2)))
    base, peak, took = (_grpo if spec["stage"] == "grpo" else _sft)(spec)
    print(json.dumps({"baseline_gb": base / 1e9, "peak_gb": peak / 1e9, "measured_gb": (peak - base) / 1e9,
                      "steps_s": round(took, 2)}), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", required=True, help="the case as JSON (measure_case writes it)")
    args = ap.parse_args(argv)
    _child(json.loads(args.child))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What a rehearsal's report must show beyond its own step checks: the paper's settings as configured,
each step's outcomes, the server configuration's LoRA and importance sampling, SFT's settings.

    checks = paper_checks(report, load(root, profile="full").settings("grpo"))
    calibrate(params, out)      # the whole rehearsal with these checks (`lis bench all`'s rehearsal)

Each check is ``{"check": what must hold, "ok": bool, "value": what was found}``, over the parts the
report ran (``report["parts"]``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lis.config.training import GrpoSection
from lis.params import load
from lis.train.rehearsal.run import rehearse

OUTCOMES = {"submitted": 24, "wrong": 16, "policy_fault": 24, "infra_error": 0}  # of 64, as scripted
CHECKS_PER_PART = {"sft": 1, "grpo": 6}   # the rehearsal's own checks per part (+1 for a LoRA GRPO part)


def _check(checks: list[dict[str, Any]], name: str, ok: bool, value: Any) -> None:
    checks.append({"check": name, "ok": bool(ok), "value": value})


def paper_checks(report: dict[str, Any], full_grpo: GrpoSection) -> list[dict[str, Any]]:
    """The checks (module doc) of ``report`` against the full profile's grpo section ``full_grpo``."""
    checks: list[dict[str, Any]] = []
    parts = report.get("parts", [])
    _check(checks, "the full profile rehearsed", report.get("profile") == "full", report.get("profile"))
    want = sum(CHECKS_PER_PART[p.split(":")[0]] for p in parts) + sum(
        1 for name, g in report["grpo"].items() if g.get("lora_rank"))
    _check(checks, f"every part ran its own checks ({want} for {', '.join(parts)})",
           len(report["checks"]) >= want and set(parts) == {f"sft:{k}" for k in report["sft"]}
           | {f"grpo:{k}" for k in report["grpo"]}, len(report["checks"]))
    _check(checks, "every one of the rehearsal's own checks held", bool(report.get("ok"))
           and all(c["ok"] for c in report["checks"]), [c["check"] for c in report["checks"] if not c["ok"]])
    for name, g in report["grpo"].items():
        s = g["settings"]
        _check(checks, f"grpo {name}: the paper's batch: 8 prompts x 8 samples, micro-batch 1",
               (s["prompts_per_step"], s["samples_per_prompt"], s["micro_batch"]) == (8, 8, 1),
               [s["prompts_per_step"], s["samples_per_prompt"], s["micro_batch"]])
        _check(checks, f"grpo {name}: the paper's budgets (16,384 prompt, 65,536 episode tokens) and loss",
               (s["max_prompt_tokens"], s["max_episode_tokens"], s["loss_agg"]) == (16384, 65536, "seq-mean-token-sum"),
               [s["max_prompt_tokens"], s["max_episode_tokens"], s["loss_agg"]])
        _check(checks, f"grpo {name}: the paper's clipping (0.2 / 0.28, dual 3) and learning rate 1e-6",
               (s["clip_low"], s["clip_high"], s["clip_dual"], s["lr"]) == (0.2, 0.28, 3.0, 1e-6),
               [s["clip_low"], s["clip_high"], s["clip_dual"], s["lr"]])
        _check(checks, f"grpo {name}: the full profile's engine budget, no prompt dropped",
               s["engine"] == full_grpo.engine.model_dump() and g["prompts_dropped"] == 0,
               {"engine": s["engine"], "prompts_dropped": g["prompts_dropped"]})
        _check(checks, f"grpo {name}: each step {OUTCOMES['submitted']} submitted / {OUTCOMES['wrong']} wrong / "
               f"{OUTCOMES['policy_fault']} policy faults (turn budget) / no infrastructure error, >= 8 malformed calls",
               bool(g["steps"]) and all(st["outcomes"] == OUTCOMES and st["faults"] == {"turn_budget": 24}
                                        and st["malformed_calls"] >= 8 for st in g["steps"]),
               [{k: st[k] for k in ("outcomes", "faults", "malformed_calls")} for st in g["steps"]])
    if "server-lora" in report["grpo"]:
        g = report["grpo"]["server-lora"]
        _check(checks, "grpo server-lora: a served policy, LoRA rank 8, sequence_mask importance sampling",
               g["server"] and g["lora_rank"] == 8 and g["importance_sampling"]["mode"] == "sequence_mask",
               {"server": g["server"], "lora_rank": g["lora_rank"], "mode": g["importance_sampling"]["mode"]})
    sft = report["sft"]
    if "lora0" in sft:
        _check(checks, "sft: the full profile's batch 4 and 32,768 tokens",
               sft["lora0"]["settings"] == {"batch_size": 4, "max_tokens": 32768}, sft["lora0"]["settings"])
    if {"lora0", "lora8"} <= set(sft):
        _check(checks, "sft: LoRA trains fewer parameters than full fine-tuning",
               sft["lora8"]["parameters"]["trainable"] < sft["lora0"]["parameters"]["trainable"],
               [sft["lora8"]["parameters"]["trainable"], sft["lora0"]["parameters"]["trainable"]])
    return checks


def calibrate(params, out: Path, *, steps: int = 2, threads: int = 2) -> dict[str, Any]:
    """The whole rehearsal of ``params`` (the full profile) into ``out``, its own checks and
    :func:`paper_checks`; the numbers: wall times, step times, losses, importance ratios, peak RSS."""
    report = rehearse(params, out, steps=steps, threads=threads)
    full = load(params.root, profile="full").settings("grpo")
    checks = [dict(c) for c in report["checks"]] + paper_checks(report, full)
    numbers = {k: report[k] for k in ("profile", "model", "sandbox_backend", "parts", "steps", "wall_s", "peak_rss_mb")}
    numbers["sft"] = {k: {f: v[f] for f in ("steps", "loss", "wall_s", "parameters")} for k, v in report["sft"].items()}
    numbers["grpo"] = {k: {"wall_s": v["wall_s"], "steps": v["steps"]} for k, v in report["grpo"].items()}
    return {"numbers": numbers, "checks": checks}

"""Inputs of the report stage built with the real producers on hand-made episodes: eval metrics by
lis.eval.metrics.compute_metrics, behaviour.json by lis.analysis.behaviour, efficiency.json by
lis.analysis.efficiency_tables, storage.json by lis.analysis.efficiency_storage, throughput.json by
lis.bench.throughput.summarize, GRPO logs in the columns of lis.train.grpo.columns. Episodes are our
trajectory records (lis.agent.trajectory) with known rewards, so table cells can be hand-checked.

    root = make_project(tmp_path, jobs={...})     # a project copy: params, schema, overlays, references
    build_all(root)                               # every input the report declares for those jobs
"""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from lis.agent import Step, Trajectory
from lis.agent.trajectory import ToolCallRecord

REPO = Path(__file__).resolve().parents[2]


def make_project(tmp: Path, jobs: dict | None = None, rl_pairs: list | None = None, report: dict | None = None,
                 models: dict | None = None, profile: str = "smoke") -> Path:
    """A folder with the repository's params (jobs replaced), schema, overlays and reference data."""
    root = tmp / "proj"
    (root / "workflow").mkdir(parents=True)
    shutil.copytree(REPO / "workflow" / "schemas", root / "workflow" / "schemas")
    shutil.copytree(REPO / "workflow" / "params", root / "workflow" / "params")
    shutil.copytree(REPO / "data" / "reference", root / "data" / "reference")
    data = yaml.safe_load((REPO / "params.yaml").read_text())
    data["profile"] = profile
    if jobs is not None:
        data["jobs"] = jobs
    if rl_pairs is not None:
        data["behaviour"]["rl_pairs"] = rl_pairs
    if report:
        data["report"].update(report)
    if models:
        data["models"].update(models)
    (root / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def params_of(root: Path) -> dict[str, Any]:
    from lis.params import load

    return load(params_file=root / "params.yaml").data


# -- episodes -------------------------------------------------------------------------------------
def _call(command: str) -> ToolCallRecord:
    return ToolCallRecord(id="c", tool="execute_bash", arguments={"command": command}, raw_arguments=None,
                          observation="ok", exit_code=0, exec_time_s=0.5, error=None)


def episode(model: str, domain: str, mode: str, task_id: str, reward: float | None, *, repeat: int = 0,
            commands: tuple[str, ...] = ("pip install sympy", "python3 -c 'from scipy.optimize import fsolve; print(1)'"),
            termination: str | None = None) -> Trajectory:
    """One episode: sandbox episodes run ``commands`` (one per turn) then answer; vanilla answers at
    once. Usage is reported per call (prompt grows by the observation)."""
    steps = []
    calls = list(commands) if mode != "vanilla" else []
    prompt = 100
    for i, cmd in enumerate(calls):
        steps.append(Step(index=i, content=None, reasoning=None, calls=[_call(cmd)], llm_latency_s=1.0,
                          prompt_tokens=prompt, completion_tokens=20, cached_tokens=0))
        prompt += 20 + 30
    steps.append(Step(index=len(calls), content="Let me verify. The answer is 1.", reasoning=None, calls=[],
                      llm_latency_s=1.0, prompt_tokens=prompt, completion_tokens=10, cached_tokens=0))
    term = termination or ("model_error" if reward is None else ("submitted" if mode != "vanilla" else "answered"))
    rec = Trajectory(task_id=task_id, model=model, mode=mode, domain=domain, steps=steps, termination=term,
                     repeat=repeat, reward=reward, score=None if reward is None else {"scorer": "exact"},
                     wall_s=2.0 + len(calls), llm_s=1.0 * len(steps), env_s=0.5 * len(calls))
    rec.totals()
    return rec


def write_job(root: Path, model: str, domain: str, mode: str, rewards: list[float | None]) -> dict:
    """data/eval/<model>/<domain>/<mode>/{trajectories.jsonl,metrics.json}: one episode per reward
    (task t0, t1, ...); None is an infrastructure error."""
    from lis.eval.metrics import compute_metrics

    recs = [episode(model, domain, mode, f"t{i}", r) for i, r in enumerate(rewards)]
    folder = root / "data" / "eval" / model / domain / mode
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "trajectories.jsonl", "w") as f:
        for r in recs:
            f.write(json.dumps(r.to_dict(), default=str) + "\n")
    metrics = compute_metrics(recs, {"model": model, "domain": domain, "mode": mode}, len(recs), 12.5)
    (folder / "metrics.json").write_text(json.dumps(metrics))
    return metrics


# -- analysis stages ------------------------------------------------------------------------------
def write_behaviour(root: Path, files: list[Path], settings: dict) -> None:
    from lis.analysis.behaviour.aggregate import episode_rows
    from lis.analysis.behaviour.inputs import load_trajectories
    from lis.analysis.behaviour.report import behaviour_report, write_turns
    from lis.analysis.behaviour.rules import load_rules
    from lis.analysis.behaviour.settings import validate_settings

    s = validate_settings({k: v for k, v in settings.items()}, "params behaviour")
    s["replicates"] = 100
    inputs, records = load_trajectories(files)
    rules = load_rules()
    rows = episode_rows(records, rules, s["include_reasoning"], keep_verdicts=True)
    report = behaviour_report(records, inputs, s, rules, rows)
    out = root / "data" / "analysis"
    (out / "behaviour").mkdir(parents=True, exist_ok=True)
    (out / "behaviour.json").write_text(json.dumps(report, default=str))
    write_turns(rows, out / "behaviour" / "turns.jsonl")


def write_efficiency(root: Path, files: list[Path]) -> None:
    from lis.analysis.efficiency_tables import efficiency_report, load_episodes

    inputs, eps = load_episodes(files)
    (root / "data" / "analysis").mkdir(parents=True, exist_ok=True)
    (root / "data" / "analysis" / "efficiency.json").write_text(json.dumps(efficiency_report(eps, inputs, b=100),
                                                                           default=str))


IMAGE = {"image": {"tag": "lis-sandbox:test", "id": "sha256:abc", "size_bytes": 1_234_000_000, "size_mb": 1234.0,
                   "build_path": "dockerfile", "base": "debian:bookworm-slim", "content_hash": "h",
                   "inside": {"os": "Debian 12", "python": "3.11", "libraries": {"numpy": "1.26"},
                              "tools": {"git": True}, "user": "sandbox", "uid": 1000, "cwd": "/testbed",
                              "debian_packages": 300}},
         "params_hash": "p"}


def write_image_and_storage(root: Path) -> None:
    from lis.analysis.efficiency_storage import storage_report

    img = root / "data" / "image" / "manifest.json"
    img.parent.mkdir(parents=True, exist_ok=True)
    img.write_text(json.dumps(IMAGE))
    mem = root / "data" / "bench" / "sandbox_memory.json"
    mem.parent.mkdir(parents=True, exist_ok=True)

    def stat(v):
        return {"mean": v, "ci95": [v - 1, v + 1], "n": 3, "values": [v - 1, v, v + 1]}

    mem.write_text(json.dumps({"idle_mib": stat(40.0), "busy_peak_mib": stat(180.0), "busy_cgroup_peak_mib": stat(190.0),
                               "backend": "docker", "source": "cgroup v2", "memory_limit_mib": 2048,
                               "workload": {"description": "numpy"}}))
    rep = storage_report(root / "data" / "reference" / "storage_quoted.yaml", img, mem)
    (root / "data" / "analysis" / "storage.json").write_text(json.dumps(rep, default=str))


def write_throughput(root: Path) -> None:
    from lis.bench.throughput import run_summary, summarize

    def eps(k, wall):
        return [{"termination": "submitted", "wall_s": wall, "turns": 2, "model_tokens": 50, "billed_tokens": 400}] * k

    runs = [run_summary("vanilla", 0, 0, eps(6, 1.0), 60.0), run_summary("sandbox", 0, 1, eps(6, 2.0), 120.0),
            run_summary("sandbox", 1, 0, eps(6, 2.0), 120.0), run_summary("vanilla", 1, 1, eps(6, 1.0), 60.0)]
    out = root / "data" / "bench" / "throughput.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"schema": 1, "settings": {"concurrency": 2, "model": "m"}, "runs": runs,
                               "summary": summarize(runs, ["vanilla", "sandbox"]), "model": {"name": "m"}}))


def write_run(root: Path, run: str, steps: int = 5, mode: str = "sandbox", seed: int = 0) -> None:
    """data/train/runs/<run>/{metrics.json,train_log.csv} in the GRPO stage's columns."""
    from lis.train.grpo.columns import PLOT_COLUMNS

    folder = root / "data" / "train" / "runs" / run
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for s in range(1, steps + 1):
        r = {k: 0 for k in PLOT_COLUMNS}
        r.update(step=s, reward_mean=round(0.1 * s, 3), tool_calls_mean=1.0 + s, turns_mean=2.0 + 0.5 * s)
        rows.append(r)
    with open(folder / "train_log.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=PLOT_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    (folder / "metrics.json").write_text(json.dumps({"model": run, "mode": mode, "data": "files", "steps": steps,
                                                     "wall_s": 321.0, "reward_first": 0.1, "reward_last": 0.5,
                                                     "settings": {"seed": seed}}))


def write_model(root: Path, name: str, manifest: dict) -> None:
    folder = root / "data" / "models" / name
    folder.mkdir(parents=True, exist_ok=True)
    fname = "card.json" if manifest.get("trained_here") is False else "manifest.json"
    (folder / fname).write_text(json.dumps(manifest))


# -- everything the report declares for the project's jobs ---------------------------------------
DEFAULT_REWARDS = {"vanilla": [1.0, 0.0, 0.0, 1.0], "sandbox": [1.0, 1.0, 0.0, None],
                   "sandbox_inline": [0.0, 1.0, 0.0, 0.0]}


def build_all(root: Path, rewards: dict | None = None, external_cards: dict | None = None) -> dict:
    """Write every declared input of the report for the project's params. ``rewards``: per
    (model, domain, mode) or per mode, the episodes' rewards (default DEFAULT_REWARDS)."""
    data = params_of(root)
    jobs = data["jobs"]
    rewards = rewards or {}
    metrics = {}
    files = []
    jl = [(m, d, mode) for m in jobs["models"] for d in jobs["domains"] for mode in ("vanilla", "sandbox")]
    jl += [(m, "long_context", "sandbox_inline") for m in jobs.get("long_context_ablation", [])]
    for key in jl:
        r = rewards.get(key, rewards.get(key[2], DEFAULT_REWARDS[key[2]]))
        metrics[key] = write_job(root, *key, r)
        if key[2] in ("vanilla", "sandbox"):
            files.append(root / "data" / "eval" / key[0] / key[1] / key[2] / "trajectories.jsonl")
    write_behaviour(root, files, data["behaviour"])
    write_efficiency(root, files)
    write_image_and_storage(root)
    write_throughput(root)
    runs = [f"grpo-{v}" for v in jobs.get("grpo_data", [])] + (["llm-rl"] if "llm-rl" in jobs["models"] else [])
    for run in runs:
        write_run(root, run, mode="vanilla" if run == "llm-rl" else "sandbox")
    trained = {"base", "sft", "rft", "llm-rl", *runs}
    for m in jobs["models"]:
        if m in (external_cards or {}):
            write_model(root, m, external_cards[m])
        elif m not in trained and m in jobs.get("external", []):
            write_model(root, m, {"trained_here": False, "fingerprint": "f", "entry": data["models"].get(m, {})})
    for r in jobs.get("replicates", []):   # the learning check over seeds: replicate r's chain
        for m in ("sft", "grpo-files"):
            key = (f"replicates/r{r}/{m}", "instruct_pretrain", "sandbox")
            write_job(root, *key, rewards.get(key, DEFAULT_REWARDS["sandbox"]))
            write_model(root, f"replicates/r{r}/{m}", {"kind": "sft" if m == "sft" else "grpo", "settings": {"seed": r},
                                                        "init": f"data/models/replicates/r{r}/sft"})
        write_run(root, f"replicates/r{r}/grpo-files", seed=r)
    names = set(jobs["models"])
    if names & (trained - {"base"}):
        names |= {"base", "sft"}
    for m in names:
        if not (root / "data" / "models" / m).exists():
            kind = "grpo" if m.startswith("grpo-") or m == "llm-rl" else m if m in ("base", "sft") else "base"
            write_model(root, m, {"kind": kind, "source": "tiny", "steps_done": 3, "init": "data/models/sft",
                                  "settings": {"seed": 0},
                                  "mode": "vanilla" if m == "llm-rl" else "sandbox", "data": "data/train/context/files.jsonl",
                                  "wall_s": 10.0})
    return metrics

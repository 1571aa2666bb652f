"""``lis bench``: performance measured against a baseline in the same run (``lis bench --help`` lists them)."""
from __future__ import annotations

import dataclasses
import json
import logging
import tempfile
from pathlib import Path
from typing import List, Optional

import typer

from lis import layout
from lis.bench import render as bench_render
from lis.bench import results
from lis.bench.inspect_sandbox import bench_inspect
from lis.bench.sandbox import bench_sandbox
from lis.bench.serve import bench_serve
from lis.bench.standard import BENCHMARKS as STANDARD
from lis.bench.standard import tiny_base
from lis.bench.suite import Benchmark, Context, check, run_suite, select
from lis.bench.timed import time_command
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.errors import LisError
from lis.models.local_hf import LocalHFModel
from lis.params import find_root, load
from lis.prompts import MODES
from lis.runtime import agent_config, sandbox_config
from lis.sandbox import registry
from lis.tasks.io import read_tasks
from lis.train.grpo.settings import rl_sampling, rollout_settings
from lis.train.rollout.bench import bench_group
from lis.train.rollout.bench_modes import bench_modes
from lis.util.log import console, setup_logging

app = typer.Typer(help="Benchmarks measured against a baseline in the same run: one JSON object each, or (all, time) "
                       "a results file under benchmarks/ that `lis bench render` turns into the docs' tables.",
                  no_args_is_help=True)


@app.command("sandbox")
def sandbox(backend: Optional[str] = typer.Option(None, "--backend", help="docker or bwrap (default: params)."),
            n_echo: int = typer.Option(200, "--n-echo", min=1, max=100000, help="Round trips measured."),
            concurrent: int = typer.Option(64, "--concurrent", min=1, max=1024, help="Sandboxes at once."),
            commands: int = typer.Option(20, "--commands", min=1, max=10000, help="Commands per concurrent sandbox."),
            warm: int = typer.Option(4, "--warm", min=1, max=1024, help="Warm pool size for the acquire measurement."),
            memory_n: int = typer.Option(3, "--memory-n", max=100, min=0,
                                         help="Sandboxes whose idle and busy memory is measured (0: skip)."),
            out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON here."),
            profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """Round trip of `echo hi` through our execute_bash vs a raw exec_run on the same container;
    sandbox start; acquire from a warm pool; N concurrent sandboxes x M commands; memory of an idle
    sandbox and peak memory of a busy one (numpy/scipy work), from its cgroup (see `lis bench memory`).
    Timings: n, median (p50), p90 and p99 in ms. Counts below 1 (--memory-n: below 0) are refused."""

    p = load_params(profile, params_file)
    cfg = sandbox_config(p, run_id=f"bench-{registry.RUN_ID}", overrides={"backend": backend})
    with console.status("benchmarking") as status:
        res = bench_sandbox(cfg, n_echo=n_echo, concurrent=concurrent, commands=commands, warm=warm,
                            n_memory=memory_n, progress=lambda s: status.update(f"benchmarking: {s}"))
    _emit(res, out)


@app.command("inspect")
def inspect_(backend: Optional[str] = typer.Option(None, "--backend", help="docker or bwrap (default: params)."),
             samples: int = typer.Option(5, "--samples", min=1, max=1000, help="Samples set up and cleaned up per provider."),
             calls: int = typer.Option(100, "--calls", min=1, max=100000, help="exec calls timed per provider."),
             docker: bool = typer.Option(True, "--docker/--no-docker",
                                         help="Also Inspect's docker sandbox (where `docker compose` v2 answers)."),
             out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON here.")) -> None:
    """Inspect AI's view of our sandbox: sample set-up and exec latency through the `lis` provider
    against Inspect's `local` sandbox (no isolation: the floor) and its `docker` sandbox (where
    `docker compose` v2 exists), same calls, one run; ratios printed. Needs the inspect extra."""

    if backend is not None and backend not in ("docker", "bwrap"):
        raise LisError(f"--backend {backend!r} is not docker or bwrap", "give --backend docker or --backend bwrap")
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise LisError("Inspect AI is not installed", "pip install -e '.[inspect]' (scripts/setup.sh does)") from None

    with console.status("benchmarking") as status:
        res = bench_inspect(backend, samples=samples, calls=calls, docker=docker,
                            progress=lambda s: status.update(f"benchmarking: {s}"))
    _emit(res, out)


@app.command("inspect-tasks")
def inspect_tasks(tasks: Optional[str] = typer.Option(None, "--tasks", help="Comma-separated lis Inspect tasks "
                                                      "(default: all: math, physics, chemistry, biomed, long_context, "
                                                      "instruct_follow, held_out_context)."),
                  modes: str = typer.Option("sandbox,vanilla", "--modes", help="Comma-separated modes."),
                  samples: int = typer.Option(3, "--samples", min=1, max=1000, help="Samples per task and mode."),
                  chem_tasks: Optional[Path] = typer.Option(None, "--chem-tasks",
                                                            help="A task JSONL for lis/chemistry (it has no offline "
                                                                 "sample; without one it is skipped)."),
                  out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON here."),
                  profile: Optional[str] = Profile) -> None:
    """Wall time of N samples of each lis Inspect task and mode through `inspect eval` (mockllm/model,
    a scripted policy, real sandboxes, lis's scorer, the log) against the same episodes through
    lis's loop directly (same policy, same sandboxes), in one run; the ratio is what Inspect adds."""

    try:
        from lis.bench.inspect_tasks import run as bench_tasks  # lazy: optional dependency (Inspect AI)
        from lis.inspect.tasks import DOMAINS  # lazy: optional dependency (Inspect AI)
    except ImportError:
        raise LisError("Inspect AI is not installed", "pip install -e '.[inspect]' (scripts/setup.sh does)") from None
    names = [t.strip() for t in (tasks or ",".join(DOMAINS)).split(",") if t.strip()]
    unknown = [n for n in names if n not in DOMAINS]
    if unknown:
        raise LisError(f"unknown lis task(s) {', '.join(unknown)}", f"use: {', '.join(DOMAINS)}")
    wanted = [m.strip() for m in modes.split(",") if m.strip()]
    if not wanted or any(m not in MODES for m in wanted):
        raise LisError(f"--modes {modes!r}: each must be one of {', '.join(MODES)}")
    if chem_tasks is not None:  # read now: a file that is not a chem task set is refused before anything runs
        if not chem_tasks.is_file():
            raise LisError(f"--chem-tasks {chem_tasks} is not a file", "give a task JSONL written by `lis tasks`")
        found = read_tasks(chem_tasks)
        if not found or {t.domain for t in found} != {"chem"}:
            raise LisError(f"--chem-tasks {chem_tasks} holds no chem tasks", "give `lis tasks --domain chem`'s output")

    files = {"chemistry": str(chem_tasks)} if chem_tasks else {}
    with console.status("benchmarking") as status:
        res = bench_tasks(names, wanted, samples, profile, files, progress=lambda s: status.update(f"benchmarking: {s}"))
    _emit(res, out)


@app.command("rollout")
def rollout(model_dir: Path = typer.Option(layout.path(layout.MODEL, model="sft"), "--model", help="A local model folder (the policy)."),
            tasks: Path = typer.Option(layout.path(layout.CONTEXT_TASKS, variant="files"), "--tasks",
                                       help="Training context tasks; the first one is the group's prompt."),
            samples: int = typer.Option(8, "--samples", max=1024, min=2, help="Episodes in the group (GRPO's samples per prompt)."),
            out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON here."),
            profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """A GRPO group's episodes one after the other vs all at once (real sandboxes, the policy's turns
    batched): group time against the longest episode's (the claim: within 1.5x) and the speed-up."""

    p = load_params(profile, params_file)
    task = _context_tasks(tasks)[0]
    with console.status(f"benchmarking a group of {samples} episodes"):
        res = rollout_group(p, model_dir, task, samples)
    _emit(res, out)


def rollout_group(p, model_dir: Path, task, samples: int, overrides: dict | None = None) -> dict:
    """`lis bench rollout`'s measurement: the grpo section's episodes of ``task`` (``overrides``: keys of
    the grpo section changed), ``samples`` of them."""
    g = p.settings("grpo").model_copy(update=overrides or {})
    sandbox = sandbox_config(p, run_id=f"bench-{registry.RUN_ID}",
                             backend=g.sandbox_backend)  # the backend GRPO's episodes run on
    cfg = dataclasses.replace(agent_config(p, sandbox=sandbox), max_turns=g.max_turns)
    settings = dataclasses.replace(rollout_settings(g), sampling=rl_sampling(g), deterministic=False)
    policy = LocalHFModel.load(model_dir, name="policy", device="auto", seed=0)
    try:
        return bench_group(policy, task, cfg, sandbox, settings, samples=samples)
    finally:
        policy.close()


@app.command("determinism")
def determinism(model_dir: Path = typer.Option(layout.path(layout.MODEL, model="sft"), "--model", help="A local model folder (the policy)."),
                tasks: Path = typer.Option(layout.path(layout.CONTEXT_TASKS, variant="files"), "--tasks",
                                           help="Training context tasks (GRPO's prompts, in order)."),
                steps: int = typer.Option(6, "--steps", min=2, max=1000, help="GRPO steps' rollouts, each in both modes."),
                out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON here."),
                profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """The deterministic rollout mode against the default: GRPO's rollouts (the grpo section's shape,
    real sandboxes, nothing trained), each step in both modes in alternating order; rollout seconds
    per step, their ratio with a 95% interval, and whether a step run again repeats its episodes."""

    p = load_params(profile, params_file)
    found = _context_tasks(tasks)
    with console.status("benchmarking the rollout modes") as status:
        res = rollout_modes(p, model_dir, found, steps, lambda s: status.update(f"benchmarking the rollout modes: {s}"))
    _emit(res, out)


def rollout_modes(p, model_dir: Path, found: list, steps: int, progress, overrides: dict | None = None) -> dict:
    """`lis bench determinism`'s measurement: GRPO's rollouts of ``found`` in both modes, ``steps`` steps
    (``overrides``: keys of the grpo section changed)."""
    g = p.settings("grpo").model_copy(update=overrides or {})
    if g.threads:
        import torch

        torch.set_num_threads(g.threads)
    sandbox = sandbox_config(p, run_id=f"bench-{registry.RUN_ID}", backend=g.sandbox_backend)
    cfg = dataclasses.replace(agent_config(p, sandbox=sandbox), max_turns=g.max_turns,  # as train_grpo's episodes
                              max_context_tokens=g.max_prompt_tokens + g.max_episode_tokens,
                              sampling=dataclasses.replace(rl_sampling(g), max_tokens=None))
    settings = dataclasses.replace(rollout_settings(g), deterministic=False)
    policy = LocalHFModel.load(model_dir, name="policy", device="auto", seed=g.seed, sampling=rl_sampling(g),
                               **g.engine.model_dump())
    try:
        return bench_modes(policy, found, cfg, sandbox, settings, g, steps=steps, progress=progress)
    finally:
        policy.close()


def _context_tasks(path: Path) -> list:
    """The training context tasks a rollout benchmark draws from; LisError when there are none."""

    if not path.is_file():
        raise LisError(f"no tasks at {path}", "run the context_tasks stage first (lis context-tasks)")
    found = read_tasks(path)
    if not found:
        raise LisError(f"no tasks in {path}", "give the context tasks stage's JSONL (lis context-tasks)")
    return found


def _emit(res: dict, out: Path | None) -> None:
    """Print a benchmark's JSON (and write it to ``out`` when given)."""
    text = json.dumps(res, indent=1)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    typer.echo(text)


@app.command("serve")
def serve(requests: int = typer.Option(64, "--requests", min=1, max=1024, help="Requests of the load phase."),
          concurrent: int = typer.Option(64, "--concurrent", min=1, max=256, help="Requests at once."),
          max_concurrent: int = typer.Option(64, "--max-concurrent", max=4096, min=1, help="The server's episodes at once."),
          sequential: int = typer.Option(5, "--sequential", max=10000, min=0, help="Requests one at a time first (unloaded latency)."),
          model: Optional[str] = typer.Option(None, "--model", help="Upstream instead of the replay server: a models "
                                              "entry or a model folder (e.g. the tiny agent)."),
          backend: Optional[str] = typer.Option(None, "--backend", help="docker or bwrap (default: params)."),
          warm: Optional[int] = typer.Option(None, "--warm", min=0, max=1024,
                                             help="The server's warm pool (sandboxes started ahead; default "
                                                  "serve.warm); the load starts once it is full (60 s at most)."),
          baseline: bool = typer.Option(True, "--baseline/--no-baseline", help="Also run the episodes in-process."),
          out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON here."),
          profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile) -> None:
    """Load test of `lis serve` (loopback only): N concurrent requests through the OpenAI client, the
    upstream a replay server (our overhead); latency p50/p90/p99, throughput, lost episodes (every
    request answered with its own answer, every sandbox removed), the server's sandbox start and
    acquire-wait percentiles, and the same episodes in-process."""
    p = load_params(profile, params_file)
    cfg = sandbox_config(p, run_id=f"bench-{registry.RUN_ID}", overrides={"backend": backend})
    args = ["--profile", p.profile] + (["--params", str(params_file)] if params_file else []) + \
        (["--backend", backend] if backend else []) + (["--warm", str(warm)] if warm is not None else [])
    with tempfile.TemporaryDirectory(prefix="lis-bench-serve-") as tmp, console.status("benchmarking") as status:
        res = bench_serve(Path(tmp), requests=requests, concurrent=concurrent, max_concurrent=max_concurrent,
                          sequential=sequential, serve_args=args, upstream_model=model, sandbox_config=cfg,
                          baseline=baseline, progress=lambda s: status.update(f"benchmarking: {s}"))
    _emit(res, out)


@app.command("generate")
def generate(model_dir: Path = typer.Option(layout.path(layout.MODEL, model="sft"), "--model", help="A local model folder."),
             n: int = typer.Option(16, "--n", max=100000, min=1, help="Sequences generated."),
             max_new_tokens: int = typer.Option(64, "--max-new-tokens", max=1000000, min=1, help="Tokens per sequence."),
             temperature: float = typer.Option(1.0, "--temperature", max=10.0, min=0.0, help="0 = greedy."),
             group: bool = typer.Option(False, "--group", help="All sequences share one prompt (a GRPO group)."),
             honour_stop: bool = typer.Option(False, "--stop", help="Stop at the model's stop ids (default: "
                                                                    "every sequence generates --max-new-tokens)."),
             random_stops: int = typer.Option(0, "--random-stops", max=1000000, min=0,
                                              help="K ids drawn at random also stop (a random-weight model's "
                                                   "sequences then end after about vocabulary/K tokens)."),
             max_batch: int = typer.Option(64, "--max-batch", max=100000, min=1, help="Sequences per forward pass at most."),
             max_batch_tokens: Optional[int] = typer.Option(None, "--max-batch-tokens", max=1 << 40, min=1,
                                                            help="KV-cache positions of the engine's batch (rows x "
                                                                 "padded length; default: the engine's, 131072)."),
             device: str = typer.Option("auto", "--device", help="cpu, cuda or auto."),
             threads: Optional[int] = typer.Option(None, "--threads", max=1024, min=1,
                                                   help="torch CPU threads (default: torch's choice)."),
             engine: str = typer.Option("local", "--engine", help="local: the plain sampler vs the batching "
                                        "engine | vllm: the batching engine vs a vLLM server on the same model."),
             dtype: str = typer.Option("float32", "--dtype", help="The vLLM server's --dtype (--engine vllm)."),
             out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON here.")) -> None:
    """N generations one after the other (the plain sampler) vs the same N at once through the
    batching engine, on the same model, prompts and seeds: wall time, tokens/s, speed-up. With
    ``--engine vllm``: the batching engine vs a vLLM server (the set-up's) on the same N prompts."""
    import torch

    from lis.bench.generate import bench_generate  # lazy: loads torch; the group's other benches do not need it

    if engine not in ("local", "vllm"):
        raise LisError(f"--engine {engine!r} is not local or vllm", "use --engine local or --engine vllm")
    if threads:
        torch.set_num_threads(threads)
    model = LocalHFModel.load(model_dir, device=device)
    with console.status("benchmarking") as status:
        say = lambda s: status.update(f"benchmarking: {s}")  # noqa: E731
        if engine == "vllm":
            from lis.bench.vllm import bench_vllm_generate, vllm_engine

            with tempfile.TemporaryDirectory(prefix="lis-bench-vllm-") as tmp, \
                    vllm_engine(model_dir, dtype, Path(tmp)) as server:
                res = bench_vllm_generate(model, server, n=n, max_new_tokens=max_new_tokens, temperature=temperature,
                                          group=group, progress=say)
            res["vllm_dtype"] = dtype
        else:
            res = bench_generate(model, n=n, max_new_tokens=max_new_tokens, temperature=temperature, group=group,
                                 honour_stop=honour_stop, random_stops=random_stops, max_batch=max_batch,
                                 **({"max_batch_tokens": max_batch_tokens} if max_batch_tokens else {}),
                                 progress=say)
    res["model_dir"] = str(model_dir)
    _emit(res, out)


# -- lis bench all / time / render -------------------------------------------------------------------

def _plan(ctx: Context) -> dict:
    from lis.train.plan.measure import calibrate as plan_calibrate  # lazy: loads TRL; `lis bench render` does not

    def said(row: dict) -> None:
        ctx.progress(f"{row['model']} {row['stage']}{' checkpointing' if row['checkpointing'] else ''}"
                     f"{' padded' if row.get('padded') else ''}: ratio {row['ratio']:.2f}")
    return plan_calibrate(ctx.scratch / "plan", progress=said)


def _rehearsal(ctx: Context) -> dict:
    from lis.train.rehearsal.checks import calibrate as rehearsal_calibrate  # lazy: loads torch, as above

    ctx.progress("2 SFT steps (LoRA off, on), 2 GRPO steps of 8 x 8 episodes in each of two configurations")
    return rehearsal_calibrate(load(ctx.root, profile="full"), ctx.scratch / "rehearsal")


SHORT_EPISODES = {"max_turns": 3, "max_tokens_per_turn": 64}  # a random model fills every turn's budget


def _rollout(ctx: Context) -> dict:
    from lis.train.rehearsal.run import rehearsal_tasks  # lazy: loads torch, as above

    task = rehearsal_tasks(1)[0]
    res = rollout_group(ctx.params(), tiny_base(ctx), task, 8, SHORT_EPISODES)
    res["model"] = "the tiny base, random weights"
    res["grpo_overrides"] = SHORT_EPISODES
    checks: list = []
    check(checks, "the group at once faster than its episodes one after the other (the baseline)",
          (res["speedup_vs_sequential"] or 0) > 1, res["speedup_vs_sequential"])
    return {"numbers": res, "checks": checks}


def _determinism(ctx: Context) -> dict:
    from lis.train.rehearsal.run import rehearsal_tasks  # lazy: loads torch, as above

    res = rollout_modes(ctx.params(), tiny_base(ctx), rehearsal_tasks(16), 2, ctx.progress, SHORT_EPISODES)
    res["model"] = "the tiny base, random weights"
    res["grpo_overrides"] = SHORT_EPISODES
    checks: list = []
    check(checks, "the deterministic mode repeats step 1's episodes token for token",
          res["repeat_of_step_1"]["deterministic"]["identical"], res["repeat_of_step_1"]["deterministic"])
    return {"numbers": res, "checks": checks}


_BY_NAME = {b.name: b for b in STANDARD}
SUITE: list[Benchmark] = [
    _BY_NAME["startup"], _BY_NAME["sandbox-docker"], _BY_NAME["sandbox-bwrap"], _BY_NAME["serve"],
    _BY_NAME["generate"], _BY_NAME["vllm"],
    Benchmark("rollout", "a GRPO group's 8 episodes one after the other against all at once (real sandboxes, "
              "turns batched; then with the prefix cache)", _rollout, 1.0),
    Benchmark("determinism", "GRPO's rollouts in the deterministic mode against the default, 2 steps of the "
              "grpo section's shape", _determinism, 1.0, default=False),
    _BY_NAME["gpu-check"],
    Benchmark("plan", "lis train plan's peak estimate against measured peaks of real GRPO and SFT steps (two "
              "models, six cases each): within ±25 %", _plan, 5.0),
    Benchmark("rehearsal", "lis train rehearse --profile full: the paper's training settings on a random Qwen3, "
              "every check", _rehearsal, 3.5),
]


@app.command("all")
def all_(only: Optional[str] = typer.Option(None, "--only", help="Comma-separated benchmarks (default: all but "
                                            "determinism): " + ", ".join(b.name for b in SUITE) + "."),
         out_dir: Path = typer.Option(Path(layout.BENCH_RESULTS_DIR), "--out-dir", file_okay=False,
                                      help="Folder of the results files (default: benchmarks/ of the repository)."),
         profile: Optional[str] = Profile, log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Run the benchmarks (the plan's measured peaks, the full rehearsal, the GPU checks' code, sandboxes,
    lis serve, generation, rollouts, start-up) one after the other into ONE results file,
    benchmarks/<UTC date>-<commit>.json: the machine, the commit, and each benchmark's numbers, checks
    and wall time. A benchmark that fails is recorded there and the others still run; the exit status
    is 1 when one failed or a check did not hold. 25 to 35 minutes on 2 cores, by their load."""

    chosen = select(SUITE, only)
    root = find_root()
    setup_logging(log_file, verbose)
    if not verbose:  # the terminal shows the progress lines; the benchmarks' own logs go to --log FILE
        for h in logging.getLogger().handlers:
            if not isinstance(h, logging.FileHandler):
                h.setLevel(logging.WARNING)
    out = out_dir if out_dir.is_absolute() else root / out_dir
    minutes = sum(b.minutes for b in chosen)
    console.print(f"lis bench all: {len(chosen)} benchmarks, about {minutes:.0f} min on 2 cores")
    with console.status("benchmarking") as status:
        def said(text: str) -> None:
            status.update(text)
            if not console.is_terminal or text.endswith(" s") or " in " in text.rsplit(":", 1)[-1]:
                console.print(text, highlight=False)

        record, path = run_suite(chosen, root, out, profile=profile, only=only, progress=said)
    failed = [n for n, e in record["benchmarks"].items() if not e["ok"]]
    typer.echo(json.dumps({"file": str(path), "ok": record["ok"], "wall_s": record["wall_s"],
                           "benchmarks": {n: {"ok": e["ok"], "wall_s": e["wall_s"]}
                                          for n, e in record["benchmarks"].items()}}, indent=1))
    if failed:
        console.print(f"failed: {', '.join(failed)} (their checks and errors: {path})")
        raise typer.Exit(1)


@app.command("time")
def time_(command: List[str] = typer.Argument(..., help="The command and its arguments (after --)."),
          name: Optional[str] = typer.Option(None, "--name", help="What the docs call it (default: the command "
                                             "line), e.g. \"make test\"."),
          out_dir: Path = typer.Option(Path(layout.BENCH_RESULTS_DIR), "--out-dir", file_okay=False,
                                       help="Folder of the results files (default: benchmarks/ of the repository).")) -> None:
    """Run a command and record its wall time, exit status and CPU time, with the machine and the
    commit, in a results file (benchmarks/<UTC date>-<commit>-<name>.json); exits with the command's
    status. Example: lis bench time --name "make test" -- make test"""

    root = find_root()
    out = out_dir if out_dir.is_absolute() else root / out_dir
    record, path = time_command(name or " ".join(command), list(command), root, out)
    console.print(f"{record['name']}: {record['wall_s']:.1f} s wall, exit {record['rc']} -> {path}", highlight=False)
    if record["rc"]:
        raise typer.Exit(record["rc"] if 0 < record["rc"] < 256 else 1)


@app.command("render")
def render(check_only: bool = typer.Option(False, "--check", help="Change nothing; exit 1 when a table differs "
                                           "from what the results files say."),
           results_dir: Path = typer.Option(Path(layout.BENCH_RESULTS_DIR), "--results", file_okay=False,
                                            help="Folder of the results files (default: benchmarks/)."),
           docs_dir: Path = typer.Option(Path("docs"), "--docs", file_okay=False,
                                         help="Folder of the pages whose <!-- bench:NAME --> tables are rendered.")) -> None:
    """Rewrite the docs' tables of measured numbers (between <!-- bench:NAME --> and <!-- /bench -->:
    docs/timings.md, docs/performance.md, docs/performance-generation.md, docs/training-scale.md,
    docs/training-plan.md, docs/training-paper-scale.md) from the newest results files in
    benchmarks/. --check: say which tables differ, and exit 1."""

    root = find_root()
    found = results.read_all(results_dir if results_dir.is_absolute() else root / results_dir)
    rendered = bench_render.render_docs(docs_dir if docs_dir.is_absolute() else root / docs_dir, found)
    differ = bench_render.stale(rendered)
    if check_only:
        if differ:
            console.print(f"error: {len(differ)} table(s) differ from the results files: {', '.join(differ)} "
                          "(run lis bench render)", highlight=False, soft_wrap=True)
            raise typer.Exit(1)
        typer.echo(f"{sum(len(bench_render.BLOCK.findall(o)) for o, _ in rendered.values())} tables as the "
                   f"results files say ({len(found)} files)")
        return
    for page, (old, new) in rendered.items():
        if new != old:
            page.write_text(new, encoding="utf-8")
    typer.echo(f"rendered {len(differ)} table(s) anew" + (f": {', '.join(differ)}" if differ else "") +
               f" from {len(found)} results files")

"""``lis run``: one query in a fresh sandbox, like the official ``llm-in-sandbox run``.

    lis run --model tiny --query "Count the lines of /testbed/input/data.csv"      # offline
    lis run --model Qwen/Qwen3-4B-Instruct-2507 --base-url http://localhost:8000/v1 --query "..." --input-dir ./in

Writes OUTPUT/<YYYYmmdd_HHMMSS>/ with files/ (the sandbox's /testbed/output), answer.txt and
trajectory.json. Exit status: as the command's help says, and also 3 when the output folder was over
sandbox.limits.copy_out_mb (the answer file and what fits are copied; files/COPY_OUT_NOTE.txt lists the
rest; one line on stderr says so).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
from pathlib import Path
from typing import Optional

import typer

from lis.agent.episode import run_task
from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.errors import LisError
from lis.models.registry import build_model
from lis.runtime import agent_config, model_spec, sandbox_config
from lis.sandbox import registry
from lis.sandbox.base import COPY_OUT_NOTE
from lis.sandbox.factory import make_sandbox
from lis.tasks.schema import Task
from lis.util.log import console, setup_logging
from lis.util.urls import EXAMPLE, base_url_problem

log = logging.getLogger("lis.run")

FAILED = ("model_error", "model_timeout", "sandbox_error", "error")  # terminations that make `lis run` exit EXIT_FAILED
EXIT_FAILED = 3


def _model_spec(p, model: str, base_url: Optional[str], api_key: Optional[str]) -> tuple[str, dict]:
    """A params entry by name; a local model folder; else any served model name at --base-url (an
    OpenAI-compatible server)."""
    models = p.settings("models")
    if model in models and not base_url:
        spec = model_spec(p, model)
        if spec.get("backend") == "local" and not Path(spec.get("path") or spec.get("model") or "").is_dir():
            raise LisError(f"model '{model}' is trained by the pipeline and is not built yet ({spec.get('path')})",
                           "run the pipeline (make paper), or pass a model folder: lis train tiny-agent --out DIR")
        return model, spec
    if not base_url and (Path(model) / "config.json").is_file():  # a local transformers folder
        sampling = models["sft"].written().get("sampling") if "sft" in models else None
        return Path(model).resolve().name, {"backend": "local", "path": str(Path(model).resolve()),
                                            "sampling": dict(sampling or {})}
    if not base_url:
        raise typer.BadParameter(f"'{model}' is neither a models entry of params ({', '.join(models)}) nor a model "
                                 f"folder; pass --base-url for a served model", param_hint="--model")
    spec = {"backend": "openai", "model": model, "base_url": base_url, "api_key_env": "LIS_RUN_API_KEY"}
    if api_key:
        os.environ["LIS_RUN_API_KEY"] = api_key
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in model)
    return safe, spec


def run(query: str = typer.Option(..., "--query", "-q", help="The task, in words."),
        model: str = typer.Option(..., "--model", "-m", help="A models entry of params (e.g. sft), a local model "
                                                             "folder, or a served model "
                                                             "name with --base-url."),
        base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (vLLM, SGLang, API)."),
        api_key: Optional[str] = typer.Option(None, "--api-key", help="API key (default: $OPENAI_API_KEY or none)."),
        input_dir: Optional[Path] = typer.Option(None, "--input-dir", help="Host folder copied to /testbed/input.",
                                                 exists=True, file_okay=False),
        output_dir: Path = typer.Option(Path("output"), "--output-dir", help="Results go to OUTPUT/<timestamp>/."),
        max_steps: Optional[int] = typer.Option(None, "--max-steps", max=10000, min=1, help="Turn cap (default agent.max_turns)."),
        temperature: Optional[float] = typer.Option(None, "--temperature", max=10.0, min=0.0, help="Sampling temperature."),
        timeout_s: Optional[float] = typer.Option(None, "--timeout-s", min=1.0, max=1e7,
                                                  help="Wall-clock seconds for the episode, model calls included, "
                                                       "however slowly the server answers (default "
                                                       "agent.episode_timeout_s)."),
        backend: Optional[str] = typer.Option(None, "--backend", help="docker or bwrap (default sandbox.backend)."),
        network: Optional[str] = typer.Option(None, "--network", help="none or bridge (default sandbox.network)."),
        profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
        log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Solve one query in a fresh sandbox; show progress; save files/, answer.txt and trajectory.json.

    Exit status: 0 when the episode ran to its end (submitted, max_turns, token_budget, timeout);
    2 for bad input; 3 when it ended in model_error, sandbox_error or error (trajectory.json is
    still written and the error printed).
    """
    if not query.strip():
        raise LisError("--query is empty or only whitespace", "say what the agent should do, e.g. --query \"Count the lines of "
                       "/testbed/input/data.csv\"")
    if base_url is not None:  # at once, before anything starts (not after a round of connection retries)
        problem = base_url_problem(base_url)
        if problem:
            raise LisError(f"--base-url {base_url[:200]!r} is not usable: {problem}",
                           f"give --base-url an OpenAI-compatible server's URL, e.g. --base-url {EXAMPLE}")

    setup_logging(log_file, verbose)
    registry.install_signal_handlers()
    p = load_params(profile, params_file)
    name, spec = _model_spec(p, model, base_url, api_key)
    sb_cfg = sandbox_config(p, run_id=registry.RUN_ID, overrides={"backend": backend, "network": network},
                            built_image=True)
    # the sampling of the params entry of that name when there is one (also under --base-url), else the spec's
    cfg = agent_config(p, spec=model_spec(p, name) if name in p.settings("models") else spec, domain="general",
                       sandbox=sb_cfg)
    if max_steps:
        cfg = dataclasses.replace(cfg, max_turns=max_steps)
    if temperature is not None:
        cfg = dataclasses.replace(cfg, sampling=dataclasses.replace(cfg.sampling, temperature=temperature))
    if timeout_s is not None:
        cfg = dataclasses.replace(cfg, episode_timeout_s=timeout_s)
    run_dir = output_dir / dt.datetime.now().strftime("%Y%m%d_%H%M%S")
    files = run_dir / "files"
    task = Task(id="query", domain="general", problem_statement=query, ground_truth="")
    with console.status(f"starting a {sb_cfg.backend} sandbox and the model {name}") as status:
        chat_model = build_model(name, spec)

        def on_step(step):
            calls = ", ".join(c.tool or "?" for c in step.calls) or "no tool call"
            status.update(f"turn {step.index + 1}/{cfg.max_turns}: {calls} "
                          f"({(step.prompt_tokens or 0) + (step.completion_tokens or 0)} tokens)")

        with make_sandbox(sb_cfg).start() as sb:
            rec = run_task(task, chat_model, "sandbox", cfg, sandbox=sb, input_dir=input_dir, collect_to=files,
                           on_step=on_step, run_id=registry.RUN_ID)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "answer.txt").write_text(rec.answer + ("\n" if rec.answer else ""), encoding="utf-8")
    (run_dir / "trajectory.json").write_text(json.dumps(rec.to_dict(), indent=1, ensure_ascii=False, default=str),
                                             encoding="utf-8")
    out = files / "output"
    if out.is_dir():  # copy_out keeps the folder's name; files/ is its contents, as in the official tool
        for child in out.iterdir():
            child.rename(files / child.name)
        out.rmdir()
    console.print(f"[bold]{rec.termination}[/] after {rec.turns} turns, {rec.prompt_tokens + rec.completion_tokens} "
                  f"tokens, {rec.wall_s:.1f}s — results in {run_dir}")
    if rec.error:
        console.print(rec.error, style="yellow", markup=False, highlight=False)
    if rec.answer:
        console.print(f"answer: {rec.answer[:500]}")
    cut = sb.info.get("copy_out") or {}
    if cut.get("left_out"):  # the output folder was over sandbox.limits.copy_out_mb: say so, and fail
        typer.echo(f"lis run: the sandbox's output folder was over sandbox.limits.copy_out_mb "
                   f"({cut['cap_bytes'] >> 20} MB): {cut['left_out']} file(s) ({cut['left_out_bytes'] >> 20} MB) "
                   f"left out, listed in {files / COPY_OUT_NOTE}", err=True)
        raise typer.Exit(EXIT_FAILED)
    if rec.termination in FAILED:
        raise typer.Exit(EXIT_FAILED)

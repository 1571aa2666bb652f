"""``lis model``: the model backends (build the tiny offline model)."""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.train.tiny.build import DEFAULT_SFT_STEPS

app = typer.Typer(help="Model backends: build the tiny offline model.", no_args_is_help=True)
log = logging.getLogger("lis.model")


@app.command("tiny")
def tiny(out: Optional[Path] = typer.Option(None, "--out", help="Folder to build into (default: the cache folder "
                                            "that `backend: tiny` entries use, under $LIS_CACHE_DIR/models)."),
         seed: int = typer.Option(0, "--seed", help="Seed of the tokenizer corpus, the weights and the warm-up."),
         sft_steps: int = typer.Option(DEFAULT_SFT_STEPS, "--sft-steps", min=0,
                                       help="Warm-up steps on synthetic sandbox episodes."),
         force: bool = typer.Option(False, "--force", help="Rebuild even if the folder holds this build already."),
         measure: bool = typer.Option(True, "--measure/--no-measure",
                                      help="Sample held-out turns before and after the warm-up to report the "
                                           "valid-tool-call rates (adds a few seconds)."),
         check: bool = typer.Option(False, "--check",
                                    help="Then run sample tasks of each domain in real sandboxes (the params' "
                                         "sandbox, agent.max_turns and models.tiny sampling) and add how the model "
                                         "behaves to the printed JSON under `check`."),
         check_per_domain: int = typer.Option(2, "--check-per-domain", min=1,
                                              help="Sample tasks per domain that --check runs."),
         profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
         log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Build the tiny offline Qwen3 model (about 0.36 M parameters) and print its manifest.

    Offline and deterministic: a byte-level BPE tokenizer trained on local text with TRL's
    Qwen3-Instruct-2507 chat template, a random-init 2-layer Qwen3, then a short warm-up on
    synthetic sandbox episodes so that it emits valid execute_bash / str_replace_editor /
    submit calls. The manifest (also written to DIR/manifest.json) gives the weights hash and
    the valid-tool-call rate before and after the warm-up. Takes about 75 s on 2 CPU cores.
    With --check: fraction of turns with valid tool calls, of episodes that submit and that leave
    an answer file, mean turns, and the form of vanilla answers, per domain (about 10 s).
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from lis.train.tiny.build import build_tiny, default_path
    from lis.util.log import console, setup_logging

    setup_logging(log_file, verbose)
    steps = sft_steps
    target = out or default_path(seed, steps)
    log.info("building the tiny model into %s (seed %d, %d warm-up steps)", target, seed, steps)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("warm-up", total=steps)
        manifest = build_tiny(target, seed=seed, sft_steps=steps, force=force, measure=measure,
                              on_progress=lambda _stage, done, _total: bar.update(task, completed=done))
    manifest = {"path": str(target), **manifest}
    if check:
        manifest["check"] = _check(target, seed, check_per_domain, profile, params_file)
    typer.echo(json.dumps(manifest, indent=2))


def _check(folder: Path, seed: int, per_domain: int, profile: Optional[str], params_file: Optional[Path]) -> dict:
    """check_agent on the model in ``folder`` with the sandbox, turn limit and tiny sampling of the params."""
    from lis.models.local_hf import LocalHFModel
    from lis.models.registry import sampling_from
    from lis.train.tiny.build import PAPER_SAMPLING
    from lis.train.agent_check import check_agent
    from lis.sandbox import registry
    from lis.sandbox.factory import config_from_params

    registry.install_signal_handlers()
    p = load_params(profile, params_file)
    entry = p.section("models").get("tiny") or {"sampling": {**PAPER_SAMPLING, "max_tokens": 160}}
    sandbox = config_from_params(p.section("sandbox"), p.section("image"), run_id=registry.RUN_ID)
    model = LocalHFModel.load(folder, name="tiny", device="cpu", seed=seed)
    report = check_agent(model, sandbox, per_domain=per_domain, max_turns=int(p.section("agent")["max_turns"]),
                         sampling=sampling_from("tiny", entry.get("sampling")), seed=seed)
    for domain, s in report["sandbox"].items():
        log.info("%-16s valid calls %s, submitted %s, answer file %s, mean turns %s; vanilla answer form %s",
                 domain, s["valid_call_rate"], s["submitted"], s["answer_file"], s["mean_turns"],
                 report["vanilla"].get(domain, {}).get("answer_form"))
    return report

"""``lis context-tasks``: the command line of the ``context_tasks`` stage (lis/stages/context_tasks.py) —
the RL training set: context tasks of the train split, three variants, a manifest. Its options, then
the stage's ``resolve`` and ``run``, then a summary on the terminal.

    lis context-tasks --out-dir data/train/context --profile smoke   # the pipeline's stage
    lis context-tasks --out-dir /tmp/ctx --profile ci -v

Writes ``<out-dir>/files.jsonl`` (documents as files: LLM-in-Sandbox-RL), ``<out-dir>/prompt.jsonl``
(the same tasks, documents in the prompt: mode ``sandbox_inline``), ``<out-dir>/math.jsonl``
(generated math problems) and ``<out-dir>/manifest.json`` (counts, qa_type mix, seed, source, knobs,
content hashes). Reads only the ``tasks`` params (``tasks.context``). The held-out split of the
same construction is the task set ``lis tasks --domain instruct_pretrain`` writes (source
``generated``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lis import layout
from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.stages import context_tasks as stage
from lis.util.log import setup_logging

Out = typer.Option(Path(layout.CONTEXT_DIR), "--out-dir", "--out", "-o",
                   help="Folder for files.jsonl, prompt.jsonl, math.jsonl and manifest.json.")


def context_tasks(out: Path = Out, profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
                  sets: Optional[list[str]] = Sets, log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Build the training context tasks (train split) of every data variant from params `tasks.context`.

    Source generated (offline, seeded), seed (the Instruction Pre-Training seed rows, from the hub
    or a local JSONL) or paper (the authors' constructed set on the hub). An unreachable hub ends
    in a one-line error; a bad knob names its key.
    """

    setup_logging(log_file, verbose)
    settings = stage.resolve(load_params(profile, params_file, sets))
    manifest = stage.run(settings, {}, stage.outputs_in(out))
    counts = ", ".join(f"{k} {v['count']}" for k, v in manifest["variants"].items())
    typer.echo(f"wrote {counts} tasks to {out}")

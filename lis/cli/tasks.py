"""``lis tasks``: the command line of the ``tasks`` stage (lis/stages/tasks.py) — one domain's tasks as
JSONL plus a manifest beside it. Its options, then the stage's ``resolve`` and ``run``.

    lis tasks --domain math --profile smoke --out data/tasks/math.jsonl          # settings from params (the pipeline)
    lis tasks --domain biomed --source hub --revision <sha> --limit 100 --seed 0 --out data/tasks/biomed.jsonl
    lis tasks --domain math --source hub --require-pinned --out data/tasks/math.jsonl   # strict: refuse an unpinned revision
    lis tasks --domain instruct_pretrain --source generated --out data/tasks/instruct_pretrain.jsonl  # held-out context tasks

Settings come from params (``tasks.domains.<domain>``, ``tasks.samples_dir``, ``tasks.bench_dataset``,
``tasks.context`` for source generated, profile applied); a flag given on the command line wins over params.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Sets, Verbose, load_params
from lis.errors import ParamsError
from lis.stages import tasks as stage
from lis.stages.tasks import manifest_path
from lis.util.log import setup_logging


Domain = typer.Option(..., "--domain", "-d", help="math | physics | chem | biomed | long_context | instruct_follow"
                                                  " | instruct_pretrain | demo.")
Source = typer.Option(None, "--source", "-s",
                      help="samples: the offline sample in data/samples (none for chem and instruct_pretrain); "
                           "hub: the Hugging Face hub at --revision; generated (instruct_pretrain only): the "
                           "held-out split of the context tasks built as params tasks.context says.")
Revision = typer.Option(None, "--revision", "-r", help="hub only: the dataset revision to pin (a commit sha). "
                                                       "Without one the current main is read, with a warning, and the "
                                                       "commit read is recorded in the manifest.")
RequirePinned = typer.Option(False, "--require-pinned", help="hub only: refuse to read a dataset whose revision is not "
                                                            "pinned (strict runs).")
BenchDataset = typer.Option(None, "--bench-dataset", help="hub, paper only: the hub dataset of the paper's benchmark "
                                                          "(default: tasks.bench_dataset).")
Dataset = typer.Option(None, "--dataset",
                       help="hub only: paper (daixuancheng/llm-in-sandbox-bench and -rl, the rows the paper ran) or "
                            "original (the upstream benchmark, formatted like the paper).")
Config = typer.Option(None, "--config", help="hub, instruct_pretrain only: instruct_pretrain (train, the default) "
                                             "or a *_mini validation config.")
Limit = typer.Option(None, "--limit", "-n", min=1, max=10000000, help="keep at most N tasks (a seeded draw; the order is kept).")
Seed = typer.Option(None, "--seed", min=0, max=2**32 - 1, help="seed of the --limit draw.")
Out = typer.Option(..., "--out", "-o", help="JSONL file to write, e.g. data/tasks/<domain>.jsonl; the manifest "
                                            "goes beside it as <name>.manifest.json.")
SamplesDir = typer.Option(None, "--samples-dir", help="samples only: the folder holding the samples "
                                                      "(default: data/samples of this checkout, or $LIS_SAMPLES_DIR).")


def tasks(domain: str = Domain, source: Optional[str] = Source, revision: Optional[str] = Revision,
          dataset: Optional[str] = Dataset, config: Optional[str] = Config, limit: Optional[int] = Limit,
          seed: Optional[int] = Seed, out: Path = Out, samples_dir: Optional[Path] = SamplesDir,
          require_pinned: bool = RequirePinned, bench_dataset: Optional[str] = BenchDataset,
          profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile, sets: Optional[list[str]] = Sets,
          log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Write one domain's task set (JSONL, one Task per line) and its manifest (count, source, revision, sha256).

    Repeats (AIME 16x, AA-LCR 4x in the paper) are a runner setting: every id appears once.

    With --source hub the revision should be pinned: an unpinned one reads the current main with a
    warning (refused with --require-pinned); the commit read is recorded in the manifest (resolved_commit).

    An unreachable hub (revision not in the local HF cache) ends in a one-line error suggesting --source samples.
    """

    setup_logging(log_file, verbose)
    try:
        params = load_params(profile, params_file, sets)
    except ParamsError:
        if profile or params_file or sets:
            raise
        params = None  # outside a project: the flags alone
    settings, inputs = stage.resolve(domain, source=source, revision=revision, dataset=dataset, config=config,
                                     limit=limit, seed=seed, samples_dir=samples_dir, require_pinned=require_pinned,
                                     bench_dataset=bench_dataset, params=params)
    stage.run(settings, inputs, {"tasks": out, "manifest": manifest_path(out)})

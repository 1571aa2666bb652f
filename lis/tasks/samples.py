"""The offline source: small real samples of each benchmark in data/samples (in git, with licenses)."""
from __future__ import annotations

import os
from pathlib import Path

from lis import layout
from lis.errors import LisError
from lis.tasks.checks import ensure_sane
from lis.tasks.domains import module
from lis.tasks.schema import Task

ENV = "LIS_SAMPLES_DIR"


def samples_dir() -> Path:
    """``$LIS_SAMPLES_DIR``, else ``data/samples`` of the checkout this package lives in."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    return Path(__file__).resolve().parents[2] / layout.SAMPLES_DIR


def load_samples(domain: str, root: str | Path | None = None) -> list[Task]:
    """The sample tasks of ``domain`` from ``root`` (default :func:`samples_dir`).

    Raises LisError when the domain is unknown, has no offline sample (chem: ChemBench4K;
    instruct_pretrain: the RL set), its folder is missing, or a row is malformed or duplicated.
    """
    mod = module(domain)
    if mod.SAMPLE is None:
        raise LisError(f"no offline sample for {domain} ({mod.BENCHMARK}): none could be redistributed",
                       f"use --source hub --revision <sha> for {domain}")
    folder = Path(root or samples_dir()) / mod.SAMPLE
    if not folder.is_dir():
        raise LisError(f"sample folder {folder} does not exist", f"restore data/samples from git or set {ENV}")
    tasks = mod.load_sample(folder)
    for t in tasks:
        t.meta["source"] = f"samples:{mod.SAMPLE}"
    return ensure_sane(tasks, f"samples of {domain}")

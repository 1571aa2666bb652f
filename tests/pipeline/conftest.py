"""ONE pipeline run for every pipeline test: the ci profile's trained matrix, run once per test session.

``trained_run`` runs the README's main command, `make paper`, in a fresh copy of the repository whose
params select the ci profile and the small trained matrix (tests/conftest.py ``small_matrix``): image,
task sets, context tasks, the tiny base, the teacher's episodes in real sandboxes, SFT, GRPO on the files
variant, the LLM-RL baseline, their evaluations in both modes, the analyses, the benchmarks and the report.

Tests that only read it, or run a command that must have nothing to do, use it as it is. Tests that
change something (a param, a file of code, DVC's own state) work on ``fork(trained_run, dest)``: a copy
made by ``cp -a``, which keeps every modification time, so that Snakemake sees the outputs exactly as the
run left them. The pipeline tests share one xdist group (tests/conftest.py), so one worker runs this once.
"""
from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import BIN, copy_repo, run, small_matrix


@dataclass(frozen=True)
class PipelineRun:
    repo: Path      # the repository copy the run wrote into (read it; fork it to change it)
    output: str     # what `make paper` printed (stdout and stderr)
    seconds: float  # its wall time


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory, image_tag) -> PipelineRun:
    """`make paper` on the ci profile's small trained matrix, once per session (several minutes on 2 cores)."""
    repo = copy_repo(tmp_path_factory.mktemp("pipeline") / "repo")
    small_matrix(repo)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "ci profile, small trained matrix"],
        cwd=repo)
    t0 = time.monotonic()
    # PYTHONPATH: the stages run the copy's own code (the re-run tests edit it); the venv is this checkout's
    r = run(["make", "paper", f"VENV={BIN.parent}", "CORES=2"], cwd=repo, env={"PYTHONPATH": str(repo)},
            timeout=2400)
    return PipelineRun(repo, r.stdout + r.stderr, time.monotonic() - t0)


def fork(pipeline: PipelineRun, dest: Path) -> Path:
    """A copy of the run's repository at ``dest`` with every modification time kept (`cp -a`)."""
    subprocess.run(["cp", "-a", str(pipeline.repo), str(dest)], check=True)
    return dest

"""The files a Snakemake job reads inside folders that other stages fill.

``dvc.yaml`` names such a folder (``data/eval``) and DVC hashes it; Snakemake links jobs by file, so
the rule lists each file the job's params call for. A stage names its function in ``Stage.inputs``;
each takes the merged params and returns paths relative to the repository.
"""
from __future__ import annotations

from pathlib import Path

from lis import layout
from lis.analysis.trajectories import jobs_paths
from lis.params import Params
from lis.report.inputs import declared_inputs


def _trajectories(params: Params, modes) -> list[str]:
    jobs = params.settings("jobs")
    return [p.as_posix() for p in jobs_paths(Path(layout.EVAL_ROOT), jobs.models, jobs.domains, modes)]


def behaviour(params: Params) -> list[str]:
    """The trajectories of every evaluation job, in the modes the analysis reads."""
    return _trajectories(params, params.settings("behaviour").modes)


def efficiency(params: Params) -> list[str]:
    """The trajectories of every evaluation job, vanilla and sandbox."""
    return _trajectories(params, ("vanilla", "sandbox"))


def throughput(params: Params) -> list[str]:
    """The task sets the throughput benchmark draws from."""
    return [layout.path(layout.TASKS, domain=d).as_posix() for d in params.settings("throughput").domains]


def report(params: Params) -> list[str]:
    """Everything the report reads for the configured jobs (:func:`lis.report.inputs.declared_inputs`)."""
    return declared_inputs(params.data)

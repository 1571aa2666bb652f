"""Every artifact path of the pipeline, once: a template per artifact, relative to the repository.

    layout.path(layout.EVAL_TRAJECTORIES, model="base", domain="math", mode="sandbox")
    # -> Path("data/eval/base/math/sandbox/trajectories.jsonl")

Code names an artifact through this module. The Snakemake rules and ``dvc.yaml`` keep their
literal paths (they are read by people and by those tools), and ``lis pipeline check`` proves
that every path they declare under ``data/`` or ``paper_figures/`` is one of these templates
(:func:`problems`), so a path renamed on one side only is an error, not a silent second copy.
"""
from __future__ import annotations

import re
from pathlib import Path

# -- inputs kept in the repository ------------------------------------------------------------------
REFERENCE_DIR = "data/reference"
PAPER_NUMBERS = "data/reference/paper_numbers.yaml"
DESIGN_TABLES = "data/reference/design_tables.yaml"
STORAGE_QUOTED = "data/reference/storage_quoted.yaml"
SAMPLES_DIR = "data/samples"
MODEL_CONFIGS_DIR = "data/model_configs"
BENCH_RESULTS_DIR = "benchmarks"  # results files of `lis bench all` / `lis bench time`, committed

# -- stage outputs ----------------------------------------------------------------------------------
IMAGE_MANIFEST = "data/image/manifest.json"
TASKS_DIR = "data/tasks"
TASKS = "data/tasks/{domain}.jsonl"
TASKS_MANIFEST = "data/tasks/{domain}.manifest.json"
CONTEXT_DIR = "data/train/context"
CONTEXT_TASKS = "data/train/context/{variant}.jsonl"
CONTEXT_MANIFEST = "data/train/context/manifest.json"
TEACHER_DIR = "data/train/teacher"
TEACHER_TRAJECTORIES = "data/train/teacher/trajectories.jsonl"
TEACHER_MANIFEST = "data/train/teacher/manifest.json"
REHEARSAL_DIR = "data/train/rehearsal"
MODELS_DIR = "data/models"
MODEL = "data/models/{model}"
REPLICATE_MODEL = "data/models/replicates/r{replicate}/{model}"
RUNS_DIR = "data/train/runs"
RUN = "data/train/runs/{run}"
RUN_METRICS = "data/train/runs/{run}/metrics.json"
RUN_LOG = "data/train/runs/{run}/train_log.csv"
REPLICATE_RUN_METRICS = "data/train/runs/replicates/r{replicate}/{run}/metrics.json"
REPLICATE_RUN_LOG = "data/train/runs/replicates/r{replicate}/{run}/train_log.csv"
EVAL_ROOT = "data/eval"
EVAL_JOB = "data/eval/{model}/{domain}/{mode}"
EVAL_METRICS = "data/eval/{model}/{domain}/{mode}/metrics.json"
EVAL_TRAJECTORIES = "data/eval/{model}/{domain}/{mode}/trajectories.jsonl"
REPLICATE_EVAL_METRICS = "data/eval/replicates/r{replicate}/{model}/{domain}/{mode}/metrics.json"
REPLICATE_EVAL_TRAJECTORIES = "data/eval/replicates/r{replicate}/{model}/{domain}/{mode}/trajectories.jsonl"
JOURNAL_ROOT = "data/journal"
BEHAVIOUR = "data/analysis/behaviour.json"
BEHAVIOUR_DIR = "data/analysis/behaviour"
BEHAVIOUR_CSV = "data/analysis/behaviour/{table}.csv"
TURNS = "data/analysis/behaviour/turns.jsonl"
TURNS_PARQUET = "data/analysis/behaviour/turns.parquet"
EFFICIENCY = "data/analysis/efficiency.json"
EFFICIENCY_EPISODES = "data/analysis/efficiency_episodes.csv"
EFFICIENCY_EPISODES_PARQUET = "data/analysis/efficiency_episodes.parquet"
STORAGE = "data/analysis/storage.json"
SANDBOX_MEMORY = "data/bench/sandbox_memory.json"
THROUGHPUT = "data/bench/throughput.json"
STAGE_FILE = "data/stages/{stage}/{name}"  # a stage's own outputs, until other code reads them by name
REPORT_DIR = "paper_figures"
REPORT_FILE = "paper_figures/{name}"

ROOTS = ("data/", "paper_figures")  # what a declared path must be a template of when it starts with one
FREE = (REFERENCE_DIR, SAMPLES_DIR, MODEL_CONFIGS_DIR)  # inputs kept in the repository: any file under them


def templates() -> dict[str, str]:
    """Every template, by its name here."""
    return {k: v for k, v in globals().items() if k.isupper() and isinstance(v, str)}


def path(template: str, **fields: object) -> Path:
    """The template filled in; a missing field is a KeyError naming it."""
    return Path(template.format(**fields))


def _regex(template: str) -> re.Pattern:
    parts = re.split(r"(\{[^}]*\})", template)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts) + "$")


_PATTERNS = {name: _regex(t) for name, t in templates().items()}


def name_of(declared: str) -> str | None:
    """The name of the template a declared path is (placeholders of any spelling: Snakemake's
    ``{m}``, DVC's ``${item.model}``, or a literal value), or of the FREE folder it lies in, or None."""
    plain = re.sub(r"\$\{[^}]*\}|\{[^}]*\}", "x", declared.rstrip("/"))
    free = next((n for n, t in templates().items() if t in FREE and plain.startswith(t + "/")), None)
    return free or next((n for n, rx in _PATTERNS.items() if rx.match(plain)), None)


def problems(paths: set[str] | frozenset[str], where: str) -> list[str]:
    """One line per declared path under data/ or paper_figures/ that is not a layout template."""
    return [f"{where}: {p} is not a path of lis/layout.py (add it there, or fix the path)"
            for p in sorted(paths) if p.startswith(ROOTS) and name_of(p) is None]

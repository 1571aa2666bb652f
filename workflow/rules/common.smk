# The helpers the rules of stages.smk call, and the merged, validated params of the selected profile.
import importlib
import os
import re
import sys
from pathlib import Path

from lis.params import load as load_params
from lis.pipeline.code_deps import stage_code as code_of
from lis.stages.registry import stage as registry_stage

# `lis` is the command of the interpreter running Snakemake (the venv), even when it is not activated.
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

P = load_params(workflow.basedir, profile=config.get("profile"))
PROFILE = P.profile
# The stages' declarations are read from the checkout Snakemake runs in, which may not be the one installed.
STAGES_DIR = Path(workflow.basedir) / "lis" / "stages"


def value(key):
    """The merged params' value at ``section.key`` (``jobs.domains``)."""
    section, *rest = key.split(".")
    out = P.settings(section)
    for part in rest:
        out = getattr(out, part)
    return out


def one_of(values):
    """A wildcard constraint: exactly one of ``values`` (none: matches nothing)."""
    return "|".join(re.escape(str(v)) for v in values) or "(?!)"


def cores(key):
    """A job's threads: the params value at ``key``, at least one."""
    return max(1, int(value(key)))


def files_under(folder):
    """Every file under ``folder``: a change to any of them re-runs the rule (DVC hashes the folder)."""
    return sorted(p.as_posix() for p in Path(folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def sources(key):
    """The files of the repository's folder (or the file) that the params key names (``tasks.samples_dir``)."""
    path = str(value(key))
    return files_under(path) if Path(path).is_dir() else [path]


def param_path(template):
    """``template`` with its ``${section.key}`` filled in from the params (wildcards are left to Snakemake)."""
    return re.sub(r"\$\{([A-Za-z0-9_.]+)\}", lambda m: str(value(m.group(1))), template)


def stage_inputs(name):
    """The files the stage reads inside folders other stages fill (its declaration's ``inputs`` function)."""
    where, function = registry_stage(name, STAGES_DIR).inputs.split(":")
    return getattr(importlib.import_module(where), function)(P)


def stage_params(name):
    """A rule's params: the profile and each merged section its stage reads. Snakemake re-runs the rule
    when one of them changes; dvc.yaml tracks the same keys."""
    return {"profile": PROFILE, **{s: _literal(P.section_json(s)) for s in registry_stage(name, STAGES_DIR).params}}


def _literal(text):
    """``text`` as a params value Snakemake does not read wildcards from (a command's ``{model}``
    placeholder, e.g.): a function's result is taken as it is."""
    return lambda wildcards: text


def stage_code(name):
    """The source files of the code stage ``name`` runs: its command's module and what it imports
    (lis/pipeline/code_deps.py, as dvc.yaml's): a fix to a scorer re-scores, a change to the report
    only re-renders. A folder stands for its files."""
    out = []
    for p in code_of(registry_stage(name, STAGES_DIR).entry):
        out += files_under(p) if Path(p).is_dir() else [p]
    return out

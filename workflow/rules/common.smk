# Shared by every rule: the merged, validated params of the selected profile.
import os
import sys
from pathlib import Path

from lis.params import load as load_params
from lis.pipeline.code_deps import stage_code as code_of
from lis.stages.registry import stage as registry_stage

# `lis` is the command of the interpreter running Snakemake (the venv), even when it is not activated.
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

P = load_params(workflow.basedir, profile=config.get("profile"))
PROFILE = P.profile
JOBS = P.data["jobs"]


wildcard_constraints:
    model="[A-Za-z0-9][A-Za-z0-9._-]*",
    domain="[a-z_]+",


def stage_params(name):
    """A rule's params: the profile and each merged section its stage reads (lis/stages/<name>.py).
    Snakemake re-runs the rule when one of them changes; dvc.yaml tracks the same keys."""
    return {"profile": PROFILE, **{s: _literal(P.section_json(s)) for s in registry_stage(name, STAGES_DIR).params}}


def _literal(text):
    """``text`` as a params value Snakemake does not read wildcards from (a command's ``{model}``
    placeholder, e.g.): a function's result is taken as it is."""
    return lambda wildcards: text


def files_under(folder):
    """Every file under ``folder``: a change to any of them re-runs the rule (DVC hashes the folder)."""
    return sorted(p.as_posix() for p in Path(folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts)


# Each rule's params come from its stage's declaration in lis/stages/ (the registry dvc.yaml is rendered
# from), its code inputs from its command's imports (lis/pipeline/code_deps.py, as dvc.yaml's): a fix to a
# scorer re-scores, a fix to the loop re-runs episodes, a change to the report only re-renders.
# `lis pipeline check` proves the rule and dvc.yaml agree.
STAGES_DIR = Path(workflow.basedir) / "lis" / "stages"


def stage_code(name):
    """The source files of the code stage ``name`` runs: its command's module and what it imports."""
    return code(*code_of(registry_stage(name, STAGES_DIR).entry))


def code(*paths):
    """Source files of ``paths`` (folders expand to their files), for a rule's input."""
    out = []
    for p in paths:
        out += files_under(p) if Path(p).is_dir() else [p]
    return out

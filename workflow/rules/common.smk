# Shared by every rule: the merged, validated params of the selected profile.
import os
import re
import sys
from pathlib import Path

from lis.params import load as load_params

# `lis` is the command of the interpreter running Snakemake (the venv), even when it is not activated.
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

P = load_params(workflow.basedir, profile=config.get("profile"))
PROFILE = P.profile
JOBS = P.data["jobs"]


wildcard_constraints:
    model="[A-Za-z0-9][A-Za-z0-9._-]*",
    domain="[a-z_]+",


def stage_params(*sections):
    """A rule's params: the profile and each merged section it reads. Snakemake re-runs the rule
    when one of them changes; dvc.yaml lists the same keys (params.yaml and the overlay)."""
    return {"profile": PROFILE, **{s: P.section_json(s) for s in sections}}


def files_under(folder):
    """Every file under ``folder``: a change to any of them re-runs the rule (DVC hashes the folder)."""
    return sorted(p.as_posix() for p in Path(folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts)


# The code each stage runs (dvc.yaml lists the same paths; `lis pipeline check` proves both cover
# what the stage's command imports, and no more): a fix to a scorer re-scores, a fix to the loop
# re-runs episodes, a change to the report only re-renders.
CORE = ["lis/__init__.py", "lis/errors.py", "lis/params.py", "lis/config", "lis/layout.py", "lis/manifest.py", "lis/records.py", "lis/util", "lis/cli/options.py"]


def code(*paths):
    """Source files of ``paths`` (folders expand to their files), for a rule's input."""
    out = []
    for p in paths:
        out += files_under(p) if Path(p).is_dir() else [p]
    return out

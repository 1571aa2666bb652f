"""What Snakemake and DVC would run, read by each tool (Snakemake's DAG, DVC's index, after
interpolation), and the comparison of the two: both files are rendered from lis/stages/, and these
helpers let the tests prove the two renderings declare the same jobs (command, dependencies, params,
outputs). Stages are matched by their set of outputs.
"""
from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from lis import layout
from lis.errors import LisError
from lis.params import BASE_ONLY, overlay_sections


@dataclass(frozen=True)
class StageDecl:
    name: str
    cmd: str
    deps: frozenset[str]
    outs: frozenset[str]
    params: frozenset[str]
    notes: tuple[str, ...] = field(default=())


def _norm_cmd(cmd: str) -> str:
    return " ".join(cmd.split())


@contextlib.contextmanager
def _cwd(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def snakemake_jobs(root: Path, target: str = "paper") -> list[StageDecl]:
    """Every job Snakemake would run for ``target`` (forced), as declared."""
    try:
        return _snakemake_jobs(root, target)
    except LisError:
        raise
    except Exception as e:  # a broken Snakefile or rule: name it in one line
        raise LisError(f"Snakemake cannot build the DAG of {target} ({type(e).__name__}: "
                       f"{' '.join(str(e).split())[:300]})", "fix the Snakefile, workflow/rules/common.smk or the stage's declaration") from None


def _snakemake_jobs(root: Path, target: str) -> list[StageDecl]:
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import DAGSettings, OutputSettings, ResourceSettings

    decls = []
    with _cwd(root), contextlib.redirect_stderr(io.StringIO()), SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        wf = api.workflow(resource_settings=ResourceSettings(cores=1), snakefile=root / "Snakefile", workdir=root)
        dag_api = wf.dag(DAGSettings(targets={target}, forceall=True))
        w = dag_api.workflow_api._workflow
        w._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
        w._build_dag()
        for job in w.dag.jobs:
            if not job.output:  # aggregate targets such as `paper`
                continue
            decls.append(StageDecl(
                name=job.rule.name, cmd=_norm_cmd(job.shellcmd or ""),
                deps=frozenset(map(str, job.input)), outs=frozenset(map(str, job.output)),
                params=frozenset(k for k in job.params.keys()),
            ))
    return decls


def dvc_stages(root: Path) -> list[StageDecl]:
    """Every stage of dvc.yaml as DVC resolves it (``${...}`` interpolated, foreach/matrix expanded)."""
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    try:
        repo = Repo(str(root))
    except Exception as e:
        raise LisError(f"DVC cannot open {root} ({' '.join(str(e).split())[:120]})", "run `dvc init` in the repository") from None
    decls = []
    with repo:
        try:
            stages = list(repo.index.stages)
        except Exception as e:
            raise LisError(f"DVC cannot read dvc.yaml ({' '.join(str(e).split())[:200]})", "fix dvc.yaml") from None
        for stage in stages:
            if not getattr(stage, "cmd", None):
                continue
            deps: set[str] = set()
            params: dict[str, set[str]] = {}
            for d in stage.deps:
                rel = Path(d.def_path).as_posix()
                if isinstance(d, ParamsDependency):
                    keys = list(d.params) if d.params else []
                    params.setdefault(rel, set()).update(k.split(".")[0] for k in keys)
                else:
                    deps.add(rel)  # a folder dep stays a folder: compare() matches it by prefix
            notes = []
            base = params.pop("params.yaml", set())
            overlay_keys: set[str] = set()
            for f, keys in params.items():
                if f.startswith("workflow/params/"):
                    overlay_keys |= keys
                else:
                    notes.append(f"params from unexpected file {f}")
            for k in sorted((base - {"profile"} - set(BASE_ONLY)) & overlay_sections(root) - overlay_keys):
                notes.append(f"tracks '{k}' in params.yaml but not in the profile overlay workflow/params/${{profile}}.yaml")
            for k in sorted(overlay_keys - base):
                notes.append(f"tracks '{k}' in the overlay but not in params.yaml")
            decls.append(StageDecl(
                name=stage.addressing, cmd=_norm_cmd(stage.cmd if isinstance(stage.cmd, str) else " && ".join(stage.cmd)),
                deps=frozenset(deps), outs=frozenset(Path(o.def_path).as_posix() for o in stage.outs),
                params=frozenset(base | overlay_keys), notes=tuple(notes),
            ))
    return decls


def _match_deps(snake: frozenset[str], dvc: frozenset[str]) -> tuple[list[str], list[str]]:
    """Snakemake lists files; DVC may name a folder, which covers every Snakemake input under it
    (and must cover at least one)."""
    covered: set[str] = set()
    only_dvc = []
    for dep in dvc:
        if dep in snake:
            covered.add(dep)
            continue
        inside = {f for f in snake if f.startswith(dep.rstrip("/") + "/")}
        if inside:
            covered |= inside
        else:
            only_dvc.append(dep)
    return sorted(snake - covered), sorted(only_dvc)


def compare(snake: list[StageDecl], dvc: list[StageDecl]) -> list[str]:
    """Human-readable differences; empty when both declare the same stages and every artifact path they
    declare is one of lis/layout.py's."""
    problems: list[str] = []
    by_outs = {s.outs: s for s in snake}
    seen = set()
    for d in dvc:
        for n in d.notes:
            problems.append(f"dvc stage {d.name}: {n}")
        s = by_outs.get(d.outs)
        if s is None:
            problems.append(f"dvc stage {d.name}: no Snakemake rule has outputs {sorted(d.outs)}")
            continue
        seen.add(d.outs)
        where = f"stage {d.name} (rule {s.name})"
        if s.cmd != d.cmd:
            problems.append(f"{where}: commands differ:\n  snakemake: {s.cmd}\n  dvc:       {d.cmd}")
        only_snake, only_dvc = _match_deps(s.deps, d.deps)
        if only_snake or only_dvc:
            problems.append(f"{where}: dependencies differ: only snakemake {only_snake}, only dvc {only_dvc}")
        if s.params != d.params:
            problems.append(f"{where}: params differ: only snakemake {sorted(s.params - d.params)}, "
                            f"only dvc {sorted(d.params - s.params)}")
        problems += layout.problems(d.deps | d.outs, f"dvc stage {d.name}")
        problems += layout.problems(s.deps | s.outs, f"snakemake rule {s.name}")
    for s in snake:
        if s.outs not in seen:
            problems.append(f"snakemake rule {s.name}: no DVC stage has outputs {sorted(s.outs)}")
    return problems

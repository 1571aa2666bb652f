"""The stages of the pipeline, in order, read from their modules without importing them.

Each module of :mod:`lis.stages` named in :data:`ORDER` assigns ``STAGE = Stage(...)``; the
expression is evaluated here with the names of :mod:`lis.stages.spec` alone (no import of the
stage's module, so reading the registry costs milliseconds even where a stage's code imports torch).
A stage module that is not in :data:`ORDER`, or a name in it without a module, is an error; the
modules of :data:`NOT_STAGES` are the package's own and work that several stages share.

Every function takes the folder to read (default: this package's): ``lis pipeline check --root``
and the Snakefile read the checkout they run in, which may not be the one installed.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

from lis.errors import LisError
from lis.stages import spec

# Pipeline order: dvc.yaml lists its stages so, and `lis --help` its stage commands.
ORDER = ("image", "tasks", "context_tasks", "base", "teacher", "sft", "grpo", "llm_rl", "sft_replicate",
         "grpo_replicate", "eval_replicate", "model_card", "eval_vanilla", "eval_sandbox", "eval_inline",
         "behaviour", "efficiency", "sandbox_memory", "throughput", "storage", "report")
FOLDER = Path(spec.__file__).parent
NOT_STAGES = {"__init__", "spec", "registry", "evaluation"}  # evaluation: the work the eval_* stages share
CONSTANTS = ("EVAL_PARAMS",)  # the lists spec.py names, read from the folder's copy


def _constants(folder: Path) -> dict:
    """spec.py's shared lists as the folder holds them (literals, read without importing)."""
    path = folder / "spec.py"
    out = {}
    for node in ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and getattr(node.targets[0], "id", "") in CONSTANTS:
            out[node.targets[0].id] = ast.literal_eval(node.value)
    missing = set(CONSTANTS) - set(out)
    if missing:
        raise LisError(f"{path}: {', '.join(sorted(missing))} not defined as literals", "restore them in lis/stages/spec.py")
    return out


def _declaration(folder: Path, name: str, names: dict) -> spec.Stage:
    path = folder / f"{name}.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "STAGE" for t in node.targets):
            code = compile(ast.Expression(node.value), str(path), "eval")
            try:
                stage = eval(code, {"__builtins__": {}}, dict(names))  # noqa: S307 - our own source, spec's names only
            except Exception as e:
                raise LisError(f"lis/stages/{name}.py: STAGE cannot be read ({e})",
                               "write it with literals and lis.stages.spec's names only") from None
            if not isinstance(stage, spec.Stage) or stage.name != name:
                raise LisError(f"lis/stages/{name}.py: STAGE must be Stage(name={name!r}, ...)", "fix its declaration")
            return stage
    raise LisError(f"lis/stages/{name}.py declares no STAGE", "add STAGE = Stage(...)")


def stages(folder: Path | None = None) -> tuple[spec.Stage, ...]:
    """Every stage, in pipeline order."""
    return _stages(Path(folder or FOLDER).resolve())


@functools.lru_cache(maxsize=8)
def _stages(folder: Path) -> tuple[spec.Stage, ...]:
    modules = {p.stem for p in folder.glob("*.py")} - NOT_STAGES
    if modules - set(ORDER):
        raise LisError(f"lis/stages: {', '.join(sorted(modules - set(ORDER)))} not in the registry's ORDER",
                       "add each stage to ORDER in lis/stages/registry.py")
    if set(ORDER) - modules:
        raise LisError(f"lis/stages: no module for {', '.join(sorted(set(ORDER) - modules))}",
                       "add lis/stages/<name>.py or drop the name from ORDER")
    names = {"Stage": spec.Stage, "Plot": spec.Plot, **_constants(folder)}
    return tuple(_declaration(folder, name, names) for name in ORDER)


def stage(name: str, folder: Path | None = None) -> spec.Stage:
    """The stage ``name``; a one-line error naming the stages there are."""
    for s in stages(folder):
        if s.name == name:
            return s
    raise LisError(f"no stage {name!r} in lis/stages", f"one of: {', '.join(ORDER)}")

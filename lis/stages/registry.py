"""The stages of the pipeline, in order, read from their modules without importing them.

A module of :mod:`lis.stages` that assigns ``STAGE = Stage(...)`` is a stage; the expression is
evaluated here with the names of :mod:`lis.stages.spec` alone (no import of the stage's module, so
reading the registry costs milliseconds even where a stage's code imports torch). The other modules
hold work that several stages share. The order is computed: a stage comes after every stage whose
outputs it depends on, and stages that do not depend on each other come by name.

Every function takes the folder to read (default: this package's): ``lis pipeline check --root``
and the Snakefile read the checkout they run in, which may not be the one installed.
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from lis.errors import LisError
from lis.stages import spec

FOLDER = Path(spec.__file__).parent
PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
CONSTANTS = ("EVAL_PARAMS",)  # the lists spec.py names, read from the folder's copy


def _constants(folder: Path) -> dict:
    """spec.py's shared lists as the folder holds them (literals, read without importing)."""
    path = folder / "spec.py"
    body = ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body
    assigns = [node for node in body if isinstance(node, ast.Assign) and len(node.targets) == 1]
    out = {n.targets[0].id: ast.literal_eval(n.value) for n in assigns if getattr(n.targets[0], "id", "") in CONSTANTS}
    missing = set(CONSTANTS) - set(out)
    if missing:
        raise LisError(f"{path}: {', '.join(sorted(missing))} not defined as literals", "restore them in lis/stages/spec.py")
    return out


def _declaration(folder: Path, name: str, names: dict) -> spec.Stage | None:
    """The module's STAGE, or None when it declares none (a module of shared work)."""
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
    return None


def _pattern(path: str) -> re.Pattern:
    parts = PLACEHOLDER.split(path)
    return re.compile("[^/]+".join(re.escape(p) for p in parts) + "$")


def _feeds(out: str, dep: str) -> bool:
    """Whether output ``out`` of one stage may be (or lie inside) dependency ``dep`` of another."""
    if PLACEHOLDER.fullmatch(dep):  # a folder the params name: the repository's, no stage's
        return False
    plain_out, plain_dep = PLACEHOLDER.sub("x", out), PLACEHOLDER.sub("x", dep)
    return (_pattern(dep).match(plain_out) is not None or _pattern(out).match(plain_dep) is not None
            or spec.holds(dep, plain_out))


def _ordered(found: dict[str, spec.Stage]) -> tuple[spec.Stage, ...]:
    """Every stage after the stages whose outputs it depends on; otherwise by name."""
    outs = {n: (*s.outs, *s.metrics, *(p.path for p in s.plots)) for n, s in found.items()}
    after = {n: {m for m in found if m != n and any(_feeds(o, d) for o in outs[m] for d in s.deps)}
             for n, s in found.items()}
    order: list[str] = []
    while len(order) < len(found):
        ready = sorted(n for n in found if n not in order and after[n] <= set(order))
        if not ready:
            cycle = sorted(n for n in found if n not in order)
            raise LisError(f"lis/stages: the stages {', '.join(cycle)} depend on each other's outputs",
                           "fix their deps and outs so that the pipeline has an order")
        order.append(ready[0])
    return tuple(found[n] for n in order)


def stages(folder: Path | None = None) -> tuple[spec.Stage, ...]:
    """Every stage, in pipeline order."""
    return _stages(Path(folder or FOLDER).resolve())


@functools.lru_cache(maxsize=8)
def _stages(folder: Path) -> tuple[spec.Stage, ...]:
    names = {"Stage": spec.Stage, "Plot": spec.Plot, **_constants(folder)}
    found = {}
    for path in sorted(folder.glob("*.py")):
        stage = _declaration(folder, path.stem, names)
        if stage is not None:
            found[stage.name] = stage
    return _ordered(found)


def stage(name: str, folder: Path | None = None) -> spec.Stage:
    """The stage ``name``; a one-line error naming the stages there are."""
    found = stages(folder)
    for s in found:
        if s.name == name:
            return s
    raise LisError(f"no stage {name!r} in lis/stages", f"one of: {', '.join(s.name for s in found)}")

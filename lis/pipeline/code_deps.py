"""The code a pipeline stage runs, found from its imports: each stage's code dependencies.

Every stage is one ``lis <command>``; the code it runs is the module defining that command and
everything it imports, directly or inside functions (grimp), plus the ``__init__`` of every package on
the way; ``lis.cli`` only registers the commands and is left out. A package whose public names load on
first use (:mod:`lis.util.lazy`) hides those loads from grimp: its ``EXPORTS`` table adds the module
defining each name imported. The Snakemake rules and dvc.yaml list exactly that code as each stage's
dependencies, so an unrelated edit re-runs nothing.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

from lis.util.code_version import PACKAGE_ROOT

DISPATCHER = "lis.cli"  # registers the sub-commands; not part of any stage's code


@functools.lru_cache(maxsize=1)
def _graph():
    import grimp

    return grimp.build_graph("lis", include_external_packages=False, cache_dir=None)


def module_file(module: str) -> str:
    """The source file of a module of lis, relative to the folder holding ``lis/``."""
    rel = Path(*module.split("."))
    if (PACKAGE_ROOT / rel).is_dir():
        return (rel / "__init__.py").as_posix()
    return rel.with_suffix(".py").as_posix()


@functools.lru_cache(maxsize=None)
def _source(module: str) -> ast.Module:
    return ast.parse((PACKAGE_ROOT / module_file(module)).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def lazy_exports(package: str) -> dict[str, str]:
    """The ``EXPORTS`` table (public name -> defining module) of a package's ``__init__``, read from the
    source (a literal dict); {} for a module or a package without one."""
    if not (PACKAGE_ROOT / Path(*package.split(".")) / "__init__.py").is_file():
        return {}
    for node in _source(package).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXPORTS" for t in node.targets):
            return dict(ast.literal_eval(node.value))
    return {}


def lazy_loads(module: str, imported: str) -> set[str]:
    """The modules that ``module``'s imports of the package ``imported`` load through its public names
    (every one for a plain ``import imported``)."""
    exports = lazy_exports(imported)
    if not exports:
        return set()
    out: set[str] = set()
    for node in ast.walk(_source(module)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == imported:
            out |= {exports[a.name] for a in node.names if a.name in exports}
            if any(a.name == "*" for a in node.names):
                out |= set(exports.values())
        elif isinstance(node, ast.Import) and any(a.name == imported for a in node.names):
            out |= set(exports.values())
    return out


def closure(module: str) -> set[str]:
    """``module`` and every module of lis it runs: its imports, transitively, with the ``__init__`` of
    each package on the way, without the CLI dispatcher."""
    graph = _graph()
    todo, seen = [module], set()
    while todo:
        m = todo.pop()
        if m in seen or m == DISPATCHER:
            continue
        seen.add(m)
        upstream = graph.find_upstream_modules(m)
        todo += [u for u in upstream if u not in seen]
        todo += [t for u in upstream for t in lazy_loads(m, u) if t not in seen]
        parts = m.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) not in seen]
    seen.discard(DISPATCHER)
    return seen


def _files(folder: Path) -> set[str]:
    """Every file under ``folder`` (relative to the folder holding ``lis/``), compiled files left out."""
    return {p.relative_to(PACKAGE_ROOT).as_posix() for p in folder.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def package_data(package_dir: Path) -> set[str]:
    """The files a package reads beside its modules (templates, rule files): what is not Python in its
    folder and in its sub-folders that are not packages themselves."""
    out = set()
    for p in package_dir.iterdir():
        if p.is_file() and p.suffix != ".py":
            out.add(p.relative_to(PACKAGE_ROOT).as_posix())
        elif p.is_dir() and p.name != "__pycache__" and not (p / "__init__.py").is_file():
            out |= _files(p)
    return out


def stage_code(entry: str) -> tuple[str, ...]:
    """The source files (relative to the folder holding ``lis/``) of the code that the command ``entry``
    (``module:function``) runs, with each package's data files, sorted; a folder stands for its files
    when the stage runs every one of them."""
    module = entry.partition(":")[0]
    # a stage module's own `run`: its command is made from the declaration (lis/cli/stage_command.py)
    return _stage_code((module, GENERATOR) if module.startswith("lis.stages.") else (module,))


GENERATOR = "lis.cli.stage_command"


@functools.lru_cache(maxsize=None)
def _stage_code(modules: tuple[str, ...]) -> tuple[str, ...]:
    files = {module_file(m) for module in modules for m in closure(module)}
    for package in {str(Path(f).parent) for f in files}:
        files |= package_data(PACKAGE_ROOT / package)
    folders: list[str] = []
    for d in sorted({str(Path(f).parent) for f in files}, key=lambda d: (d.count("/"), d)):
        if d == "lis" or any(d.startswith(f + "/") for f in folders):
            continue
        if _files(PACKAGE_ROOT / d) <= files:
            folders.append(d)
    return tuple(sorted([*folders, *(f for f in files if not any(f.startswith(d + "/") for d in folders))]))

"""The code a pipeline stage runs, found from its imports, to check the stages' declared code deps.

Every stage is one ``lis <command>``; the code it runs is the module defining that command and
everything it imports, directly or inside functions (grimp reads every import statement), plus
the ``__init__`` of every package on the way (Python runs them on import). ``lis.cli`` itself is
left out: it only registers the commands. A package whose public names load on first use
(:mod:`lis.util.lazy`) hides those loads from grimp; its ``EXPORTS`` table, read here, adds the
module defining each public name that a module imports from the package (all of them for a plain
``import lis.agent``). A stage must declare that code as dependencies — in
the Snakefile and in dvc.yaml alike — so that a fix to a scorer re-scores, a fix to the loop
re-runs episodes and a change to the report only re-renders; and it should declare no more, or
unrelated edits re-run it. ``lis pipeline check`` compares the two.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Callable

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
    """The ``EXPORTS`` table (public name -> defining module) of a package's ``__init__``; {} for a
    module or a package without one. Read from the source: the table must be a literal dict."""
    if not (PACKAGE_ROOT / Path(*package.split(".")) / "__init__.py").is_file():
        return {}
    for node in _source(package).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXPORTS" for t in node.targets):
            return dict(ast.literal_eval(node.value))
    return {}


def lazy_loads(module: str, imported: str) -> set[str]:
    """The modules that ``module``'s imports of the package ``imported`` load through its public
    names: the defining module of each name in ``from imported import ...``, and every one for an
    ``import imported`` (its attributes may be any)."""
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
    """``module`` and every module of lis it runs: its imports, transitively, with the ``__init__``
    of each package on the way (and what those import), without the CLI dispatcher."""
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


def stage_code_files(cmd: str, command_module: Callable[[str], str]) -> set[str]:
    """Source files (relative paths) of the code that ``cmd`` runs; ``command_module`` names the
    module defining a command line's sub-command (lis.cli.commands.command_module)."""
    return {module_file(m) for m in closure(command_module(cmd))}


def check_code_deps(cmd: str, deps: set[str], command_module: Callable[[str], str],
                    shared: tuple[str, ...] = ()) -> list[str]:
    """Problems with the code deps (paths under ``lis/``) that a stage declares for ``cmd``:
    code it runs that no dep covers, and code deps it does not run (but for ``shared``: the code
    every stage declares, lis.stages.spec.CORE, which one stage may not need all of)."""
    code = stage_code_files(cmd, command_module)
    declared = sorted(d.rstrip("/") for d in deps if d == "lis" or d.startswith("lis/"))

    def covers(dep: str, f: str) -> bool:
        return f == dep or f.startswith(dep + "/")

    problems = []
    missing = sorted(f for f in code if not any(covers(d, f) for d in declared))
    if missing:
        problems.append(f"runs code it does not declare as a dependency: {', '.join(missing)}")
    unused = [d for d in declared if d not in shared and not any(covers(d, f) for f in code)]
    if unused:
        problems.append(f"declares code it does not run: {', '.join(unused)}")
    return problems

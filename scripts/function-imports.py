#!/usr/bin/env python3
"""Count the ``import lis...`` statements inside function bodies of lis/ (issue 25's measure).

    python3 scripts/function-imports.py            # the total and the count per package
    python3 scripts/function-imports.py --list     # every one: file:line and the statement

An import inside a function runs when the function does; some are there for a reason (a heavy module
that only one command needs, a cycle, an optional dependency), most only because the code grew that
way. Counted: ``import lis.x`` and ``from lis.x import y`` anywhere under a ``def`` (nested included).
One that must stay says why in a ``# lazy: <reason>`` comment on its line (any of its lines, when it
spans several) or on the line just above; the script also counts those with such a comment and lists
the ones without (file:line).
"""
from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


LAZY = "# lazy:"


def function_imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, statement, has a ``# lazy:`` reason) of every lis import inside a function of ``path``."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text)
    found = []

    def reason(node: ast.stmt) -> bool:
        near = lines[node.lineno - 1:node.end_lineno]
        above = lines[node.lineno - 2].strip() if node.lineno >= 2 else ""
        return any(LAZY in line for line in near) or above.startswith(LAZY)

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if in_function and isinstance(child, ast.Import) and any(a.name.split(".")[0] == "lis" for a in child.names):
                found.append((child.lineno, ast.unparse(child), reason(child)))
            elif in_function and isinstance(child, ast.ImportFrom) and child.level == 0 and (child.module or "").split(".")[0] == "lis":
                found.append((child.lineno, ast.unparse(child), reason(child)))
            visit(child, inside)

    visit(tree, False)
    return found


def main() -> int:
    rows = []
    for path in sorted((ROOT / "lis").rglob("*.py")):
        for line, stmt, why in function_imports(path):
            rows.append((path.relative_to(ROOT).as_posix(), line, stmt, why))
    if "--list" in sys.argv[1:]:
        for f, line, stmt, why in rows:
            print(f"{f}:{line}: {stmt}{'' if why else '  (no # lazy: reason)'}")
    by_pkg = Counter("/".join(f.split("/")[:2]) for f, _, _, _ in rows)
    print(f"{len(rows)} import lis statement(s) inside function bodies")
    for pkg, n in by_pkg.most_common():
        print(f"  {n:4d}  {pkg}")
    without = [(f, line) for f, line, _, why in rows if not why]
    print(f"{len(rows) - len(without)} of them with a reason ({LAZY} comment on the line or the line above), "
          f"{len(without)} without:")
    for f, line in without:
        print(f"  {f}:{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

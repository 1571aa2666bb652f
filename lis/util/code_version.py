"""A version of source code that changes when its behaviour can change, not when its comments do.

    code_version("lis/agent", "lis/sandbox")    # 16 hex digits

Python files count by their syntax tree with docstrings removed (comments and formatting never reach
it), other files by their bytes. The eval journal's episodes and scores are keyed by it, so a fix to
the agent loop re-runs episodes while a reworded docstring costs nothing.
"""
from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding lis/


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def file_digest(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".py":
        try:
            data = ast.dump(_strip_docstrings(ast.parse(data, filename=str(path))), include_attributes=False).encode()
        except SyntaxError:
            pass  # hashed by its bytes: a file that does not parse is still a change
    return hashlib.sha256(data).digest()


def _files(path: Path, exclude: tuple[str, ...], root: Path = PACKAGE_ROOT) -> list[Path]:
    if path.is_file():
        return [path]
    def excluded(rel: str) -> bool:
        return any(rel == e or rel.startswith(e.rstrip("/") + "/") for e in exclude)

    return [p for p in sorted(path.rglob("*")) if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
            and not excluded(p.relative_to(root).as_posix())]


def _hash(paths: tuple[str, ...], exclude: tuple[str, ...], root: Path) -> str:
    h = hashlib.sha256()
    for rel in paths:
        for p in _files(root / rel, exclude, root):
            h.update(p.relative_to(root).as_posix().encode() + b"\0")
            h.update(file_digest(p))
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=64)
def _cached(paths: tuple[str, ...], exclude: tuple[str, ...]) -> str:
    return _hash(paths, exclude, PACKAGE_ROOT)


def code_version(*paths: str, exclude: tuple[str, ...] = (), root: Path | None = None) -> str:
    """Hash of the code under ``paths`` (relative to the folder holding ``lis/``), minus ``exclude``.
    ``root``: the same paths under another copy of the code (not cached: that copy may be edited)."""
    if root is None:
        return _cached(paths, tuple(exclude))
    return _hash(paths, tuple(exclude), Path(root))

"""The test tiers' markers: modules carry their own (pytestmark), and the one table left in
tests/conftest.py — fixtures whose use marks a test docker or training — names fixtures that exist."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import DOCKER_FIXTURES, TRAINING_FIXTURES

TESTS = Path(__file__).resolve().parent


def _fixtures() -> set[str]:
    names = set()
    for path in TESTS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any("fixture" in ast.unparse(d) for d in node.decorator_list):
                names.add(node.name)
    return names


def _module_marks(path: Path) -> set[str]:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets):
            items = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            return {ast.unparse(e).rsplit(".", 1)[-1] for e in items}
    return set()


def test_the_fixture_table_names_fixtures_that_exist():
    stale = sorted((DOCKER_FIXTURES | TRAINING_FIXTURES) - _fixtures())
    assert not stale, f"tests/conftest.py marks tests by fixtures that no longer exist: {stale}"


def test_every_training_module_says_so():
    unmarked = sorted(p.name for p in (TESTS / "train").glob("test_*.py") if "training" not in _module_marks(p))
    assert not unmarked, f"tests/train/ modules without pytestmark training (make test-fast would run them): {unmarked}"

"""The declared dependencies match the imports (`deptry .`, configured in pyproject's [tool.deptry]): everything
lis imports is declared and pinned, nothing declared goes unused; and deptry does catch a drift."""
from __future__ import annotations

import re

from tests.conftest import ROOT, run


def test_imports_and_declared_dependencies_agree():
    r = run(["deptry", "."], check=False)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]


def test_every_declared_dependency_is_pinned_exactly():
    text = (ROOT / "pyproject.toml").read_text()
    block = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    specs = re.findall(r'^\s*"([^"]+)"', block, re.M)
    assert specs and all("==" in s for s in specs), [s for s in specs if "==" not in s]


def test_an_undeclared_import_and_an_unused_dependency_are_caught(repo_copy):
    (repo_copy / "lis/util/_drift.py").write_text("import sympy  # noqa: F401\n")
    py = repo_copy / "pyproject.toml"
    py.write_text(py.read_text().replace('"typer==0.29.2",', '"typer==0.29.2",\n  "tabulate==0.9.0",', 1))
    r = run(["deptry", "."], cwd=repo_copy, check=False)
    out = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout + r.stderr)
    assert r.returncode == 1, out[-3000:]
    assert "DEP003 'sympy'" in out or "DEP001 'sympy'" in out, out[-3000:]
    assert "DEP002 'tabulate'" in out, out[-3000:]

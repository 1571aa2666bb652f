"""The package's layers (pyproject's import-linter contracts) hold, and they catch an import inside a
function that breaks them."""
from __future__ import annotations

from tests.conftest import run


def test_the_layers_hold():
    r = run(["lint-imports"], check=False)
    assert r.returncode == 0 and "0 broken" in r.stdout, r.stdout[-3000:]


def test_a_lazy_import_across_layers_is_caught(repo_copy):
    base = repo_copy / "lis/models/base.py"
    base.write_text(base.read_text() + "\n\ndef _sneaky():\n    from lis.agent import loop  # noqa: F401\n")
    r = run(["lint-imports"], cwd=repo_copy, check=False, env={"PYTHONPATH": str(repo_copy)})
    assert r.returncode == 1 and "BROKEN" in r.stdout
    assert "lis.models.base -> lis.agent.loop" in r.stdout

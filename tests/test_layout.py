"""lis/layout.py names every artifact path once: code reads paths from it, and the pipeline's
declarations (Snakemake rules, dvc.yaml) may only declare paths it knows."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lis import layout
from lis.cli.commands import command_entry
from lis.pipeline import problems, stale, write
from tests.conftest import ROOT


def test_templates_are_distinct_and_fill_in():
    values = list(layout.templates().values())
    assert len(values) == len(set(values))
    assert layout.path(layout.EVAL_TRAJECTORIES, model="base", domain="math", mode="sandbox") == \
        Path("data/eval/base/math/sandbox/trajectories.jsonl")
    with pytest.raises(KeyError):
        layout.path(layout.TASKS)


@pytest.mark.parametrize("declared, name", [
    ("data/eval/{m}/{d}/sandbox/metrics.json", "EVAL_METRICS"),            # Snakemake's wildcards
    ("data/eval/${item.model}/${item.domain}/vanilla/trajectories.jsonl", "EVAL_TRAJECTORIES"),   # DVC's
    ("data/models/grpo-files", "MODEL"),
    ("data/analysis/behaviour/table4.csv", "BEHAVIOUR_CSV"),
    ("paper_figures/index.md", "REPORT_FILE"),
    ("data/samples/aime25/PROVENANCE.md", "SAMPLES_DIR"),
    ("data/evals/base/math/sandbox/metrics.json", None),
    ("data/analysis/storage2.json", None),
])
def test_a_declared_path_is_known_by_its_template(declared, name):
    assert layout.name_of(declared) == name
    assert bool(layout.problems({declared}, "x")) == (name is None)


def _string_constants(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            yield n.lineno, n.value
        elif isinstance(n, ast.JoinedStr):
            yield n.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{x}" for v in n.values)


def test_the_code_spells_no_artifact_path_itself():
    """Every artifact path in lis/ comes from lis/layout.py (docstrings may show examples). The stage
    declarations (lis/stages) spell theirs as dvc.yaml does; `lis pipeline check` proves each is a
    template of the layout (test_pipeline_check_refuses_a_path_the_layout_does_not_know)."""
    found = [f"{f.relative_to(ROOT)}:{line}: {value!r}"
             for f in sorted((ROOT / "lis").rglob("*.py")) if f.name != "layout.py" and f.parent.name != "stages"
             for line, value in _string_constants(f)
             if value.startswith(("data/", "paper_figures")) and " " not in value and layout.name_of(value)]
    assert not found, "use lis.layout:\n" + "\n".join(found)


def test_pipeline_check_refuses_a_path_the_layout_does_not_know(repo_copy):
    """A stage declaring a path that is not a template of lis/layout.py: the rendered files follow the
    declaration, and the check still names the path."""
    old, new = "data/analysis/behaviour/table9_pairs.csv", "data/analysis/table9_pairs.csv"
    stage = repo_copy / "lis/stages/behaviour.py"
    assert old in stage.read_text()
    stage.write_text(stage.read_text().replace(old, new))
    write(repo_copy)
    assert stale(repo_copy) == []
    found = problems(repo_copy, command_entry)
    assert found == [f"stage behaviour: {new} is not a path of lis/layout.py (add it there, or fix the path)"], found

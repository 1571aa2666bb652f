"""The stage registry (lis/stages), the dvc.yaml rendered from it and the Snakefile's rules declare the same
commands, deps, params and outputs."""
from __future__ import annotations

import shutil

import pytest
import yaml

from lis.cli.commands import command_entry
from lis.errors import LisError
from lis.pipeline import compare, dvc_file, dvc_stages, snakemake_jobs
from lis.stages import registry
from tests.conftest import ROOT, lis


def test_repository_declarations_agree():
    r = lis(["lis", "pipeline", "check"])
    assert r.stdout.startswith("ok:"), r.stdout


def test_every_stage_is_a_lis_command_with_a_log():
    for job in snakemake_jobs(ROOT):
        assert job.cmd.startswith("lis "), job
        assert "--log logs/" in job.cmd, job


def _edit_dvc(repo, fn):
    path = repo / "dvc.yaml"
    data = yaml.safe_load(path.read_text())
    fn(data["stages"])
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.mark.parametrize("fn, expected", [
    (lambda s: s["report"].update(cmd=s["report"]["cmd"] + " --verbose"), "commands differ"),
    (lambda s: s["report"]["deps"].append("params.yaml"), "dependencies differ"),
    (lambda s: s["report"]["params"].insert(1, "image"), "tracks 'image' in params.yaml but not in the profile overlay"),
    (lambda s: s["report"]["outs"].append("paper_figures/extra.md"), "no Snakemake rule has outputs"),
    (lambda s: s.pop("report"), "snakemake rule report: no DVC stage"),
])
@pytest.mark.slow
def test_check_catches_drift(repo_copy, fn, expected):
    _edit_dvc(repo_copy, fn)
    problems = compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy))
    assert any(expected in p for p in problems), problems
    r = lis(["lis", "pipeline", "check", "--root", str(repo_copy)], check=False)
    assert r.returncode == 1 and "difference(s)" in r.stderr


def _edit_stage(repo, module, old, new, regenerate=True):
    """Edit lis/stages/<module>.py in the copy (and render its dvc.yaml again, as `lis pipeline dvc --write` would)."""
    path = repo / "lis" / "stages" / f"{module}.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    if regenerate:
        (repo / "dvc.yaml").write_text(dvc_file.render(repo))


@pytest.mark.slow
def test_a_stage_edited_without_rendering_dvc_yaml_is_caught(repo_copy):
    """The Snakefile reads the edited declaration at once; dvc.yaml, not rendered again, is stale:
    both the staleness and the difference it makes are named."""
    _edit_stage(repo_copy, "report", 'params=("report", ', 'params=("report", "image", ', regenerate=False)
    assert dvc_file.problems(repo_copy) and "lis pipeline dvc --write" in dvc_file.problems(repo_copy)[0]
    problems = compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy))
    assert any("params differ: only snakemake ['image']" in p for p in problems), problems
    r = lis(["lis", "pipeline", "dvc", "--check", "--root", str(repo_copy)], check=False)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "lis pipeline dvc --write" in r.stderr
    r = lis(["lis", "pipeline", "check", "--root", str(repo_copy)], check=False)
    assert r.returncode == 1 and "dvc.yaml is not what lis/stages/ renders" in r.stderr


@pytest.mark.slow
def test_a_stage_edited_and_rendered_is_declared_alike(repo_copy):
    """One edit in lis/stages (and `lis pipeline dvc --write`) changes both declarations."""
    _edit_stage(repo_copy, "report", 'params=("report", ', 'params=("report", "image", ')
    assert compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy)) == []
    report = next(d for d in dvc_stages(repo_copy) if "paper_figures/index.md" in d.outs)
    assert "image" in report.params


def test_a_stages_code_is_what_its_command_imports():
    """The code deps are computed from each command's imports: the scorers and the prompt templates for an
    evaluation, the templates for the report and not the agent loop, the card's code without the sandbox; a
    folder stands for its files only when the stage runs all of them."""
    from lis.pipeline.code_deps import package_data, stage_code

    def deps(name):
        return stage_code(registry.stage(name).entry)

    ev = deps("eval_sandbox")
    assert any(f.startswith("lis/rewards/") or f == "lis/rewards" for f in ev), ev
    assert any(f.startswith("lis/prompts/templates") for f in ev) and "lis/cli/eval.py" in ev
    report = deps("report")
    assert "lis/report/templates" in report and "lis/agent/loop.py" not in report and "lis/cli/report.py" in report
    card = deps("model_card")
    assert not any(f.startswith("lis/sandbox") for f in card) and "lis/cli/model_card.py" in card
    assert "lis/analysis/behaviour/patterns.yaml" in package_data(ROOT / "lis" / "analysis" / "behaviour")
    for f in report:  # a folder only when every file under it is run
        assert (ROOT / f).exists(), f
    lazy = deps("behaviour")  # `from lis.agent import ...` through the package's EXPORTS: the defining modules
    assert "lis/agent/trajectory.py" in lazy and "lis/agent/loop.py" not in lazy


def test_an_import_added_to_a_command_joins_its_code_deps(tmp_path, monkeypatch):
    """A module the command starts importing becomes a dependency with no declaration edited: the closure is
    read from the source each time (here a copy of the package whose report command imports the agent loop)."""
    import importlib
    import sys

    from lis.pipeline import code_deps

    copy = tmp_path / "src"
    shutil.copytree(ROOT / "lis", copy / "lis", ignore=shutil.ignore_patterns("__pycache__"))
    cli = copy / "lis" / "cli" / "report.py"
    cli.write_text(cli.read_text() + "\n\ndef _late():\n    from lis.agent import loop  # noqa: F401\n")
    assert "lis/agent/loop.py" not in code_deps.stage_code("lis.cli.report:report")
    for name in [m for m in sys.modules if m == "lis" or m.startswith("lis.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(copy))
    try:
        fresh = importlib.import_module("lis.pipeline.code_deps")
        assert fresh.PACKAGE_ROOT == copy and fresh is not code_deps
        assert "lis/agent/loop.py" in fresh.stage_code("lis.cli.report:report")
    finally:  # the copy's modules leave with the test (those it replaced come back with monkeypatch)
        for name in [m for m, mod in sys.modules.items() if str(getattr(mod, "__file__", "")).startswith(str(copy))]:
            del sys.modules[name]


def test_each_stage_entry_is_the_function_its_command_runs(tmp_path):
    assert dvc_file.entry_problems(ROOT, command_entry) == []
    copy = tmp_path / "lis" / "stages"
    shutil.copytree(ROOT / "lis" / "stages", copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / "report.py"
    path.write_text(path.read_text().replace('entry="lis.cli.report:report"', 'entry="lis.cli.view:view"'))
    assert dvc_file.entry_problems(tmp_path, command_entry) == [
        "stage report: entry lis.cli.view:view but its command runs lis.cli.report:report"]


def test_the_registry_refuses_a_stage_it_does_not_list(tmp_path):
    copy = tmp_path / "stages"
    shutil.copytree(ROOT / "lis" / "stages", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "extra.py").write_text((copy / "storage.py").read_text().replace('name="storage"', 'name="extra"'))
    with pytest.raises(LisError, match="extra not in the registry's ORDER"):
        registry.stages(copy)
    (copy / "extra.py").unlink()
    (copy / "storage.py").write_text((copy / "storage.py").read_text().replace('name="storage"', 'name="store"'))
    with pytest.raises(LisError, match=r"STAGE must be Stage\(name='storage'"):
        registry.stages(copy)


def test_dvc_yaml_is_rendered_from_the_registry():
    """The repository's dvc.yaml is exactly what lis/stages renders (`lis pipeline dvc --check`)."""
    assert (ROOT / "dvc.yaml").read_text() == dvc_file.render(ROOT)
    names = [s.name for s in registry.stages()]
    assert names == list(registry.ORDER) and len(names) == 21


@pytest.mark.slow
def test_the_learning_check_over_seeds_is_declared_alike(repo_copy):
    """jobs.replicates [1, 2] adds the replicates' chains (SFT -> GRPO -> two held-out evaluations each) to
    the paper target in both declarations; empty (the default), neither has them."""
    assert not [j for j in snakemake_jobs(repo_copy) if "replicate" in j.name]
    path = repo_copy / "params.yaml"
    data = yaml.safe_load(path.read_text())
    data["jobs"]["replicates"] = [1, 2]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    snake = snakemake_jobs(repo_copy)
    names = sorted(j.name for j in snake if "replicate" in j.name)
    assert names == ["eval_replicate"] * 4 + ["grpo_replicate"] * 2 + ["sft_replicate"] * 2, names
    report = next(j for j in snake if j.name == "report")
    assert "data/eval/replicates/r2/grpo-files/instruct_pretrain/sandbox/trajectories.jsonl" in report.deps
    assert compare(snake, dvc_stages(repo_copy)) == []

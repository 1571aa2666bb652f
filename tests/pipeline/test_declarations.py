"""The stage registry (lis/stages), the dvc.yaml rendered from it and the Snakefile's rules declare the same
commands, deps, params and outputs."""
from __future__ import annotations

import shutil

import pytest
import yaml

from lis.cli.commands import command_entry, command_module
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
    problems = compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy), command_module)
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
    problems = compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy), command_module)
    assert any("params differ: only snakemake ['image']" in p for p in problems), problems
    r = lis(["lis", "pipeline", "dvc", "--check", "--root", str(repo_copy)], check=False)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "lis pipeline dvc --write" in r.stderr
    r = lis(["lis", "pipeline", "check", "--root", str(repo_copy)], check=False)
    assert r.returncode == 1 and "dvc.yaml is not what lis/stages/ renders" in r.stderr


@pytest.mark.slow
def test_a_stage_edited_and_rendered_is_declared_alike(repo_copy):
    """One edit in lis/stages (and `lis pipeline dvc --write`) changes both declarations."""
    _edit_stage(repo_copy, "report", 'params=("report", ', 'params=("report", "image", ')
    assert compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy), command_module) == []
    report = next(d for d in dvc_stages(repo_copy) if "paper_figures/index.md" in d.outs)
    assert "image" in report.params


@pytest.mark.slow
def test_code_a_stage_runs_but_does_not_declare_is_caught(repo_copy):
    """Both declarations agree (one source), but it does not declare the scorers the eval stages run."""
    _edit_stage(repo_copy, "spec", '"lis/models", "lis/prompts", "lis/rewards", "lis/runtime",',
                '"lis/models", "lis/prompts", "lis/runtime",')
    problems = compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy), command_module)
    assert any("runs code it does not declare as a dependency: lis/rewards/" in p for p in problems), problems


@pytest.mark.slow
def test_code_a_stage_declares_but_does_not_run_is_caught(repo_copy):
    _edit_stage(repo_copy, "report", 'code=("lis/report", ', 'code=("lis/agent", "lis/report", ')
    problems = compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy), command_module)
    assert any("declares code it does not run: lis/agent" in p for p in problems), problems


def test_each_stage_entry_is_the_function_its_command_runs(tmp_path):
    assert dvc_file.entry_problems(ROOT, command_entry) == []
    copy = tmp_path / "lis" / "stages"
    shutil.copytree(ROOT / "lis" / "stages", copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / "report.py"
    path.write_text(path.read_text().replace('entry="lis.cli.report:report"', 'entry="lis.cli.view:view"'))
    assert dvc_file.entry_problems(tmp_path, command_entry) == [
        "stage report: entry lis.cli.view:view but its command runs lis.cli.report:report"]


def test_a_stage_without_jobs_has_its_code_checked_all_the_same(tmp_path):
    """``model_card`` runs once per ``jobs.external`` entry, none by default: no job to compare, so its
    declaration is checked from the registry (a wrong one went unseen before). The code every stage
    declares (CORE) is not held against a stage that runs less of it."""
    assert dvc_file.code_problems(ROOT, command_module) == []
    copy = tmp_path / "lis" / "stages"
    shutil.copytree(ROOT / "lis" / "stages", copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / "model_card.py"
    path.write_text(path.read_text().replace('code=("lis/models", ', 'code=("lis/sandbox", "lis/models", '))
    assert dvc_file.code_problems(tmp_path, command_module) == [
        "stage model_card (lis/stages/model_card.py): declares code it does not run: lis/sandbox"]
    assert dvc_file.code_problems(tmp_path, command_module, skip={"model_card"}) == []
    other = tmp_path / "other"  # another folder: the registry reads each folder once
    shutil.copytree(ROOT / "lis" / "stages", other / "lis" / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    path = other / "lis" / "stages" / "model_card.py"  # the card back in `lis model`'s module, beside `random`
    path.write_text(path.read_text().replace('entry="lis.cli.model_card:card"', 'entry="lis.cli.model:random"')
                    .replace("lis model card", "lis model random").replace('"lis/cli/model_card.py"', '"lis/cli/model.py"'))
    problems = dvc_file.code_problems(other, command_module)
    assert "stage model_card (lis/stages/model_card.py): runs code it does not declare as a dependency: " \
           "lis/offline/__init__.py, lis/offline/random_model.py" in problems, problems


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
    assert compare(snake, dvc_stages(repo_copy), command_module) == []

"""The stage registry (lis/stages) and the files rendered from it: dvc.yaml and the Snakemake rules declare
the same commands, deps, params and outputs, and a file edited by hand is caught."""
from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml

from lis.cli.commands import command_entry
from lis.errors import LisError
from lis.pipeline import check, dvc_file, snakemake_file
from tests.pipeline.dag import compare, dvc_stages, snakemake_jobs
from lis.stages import registry
from tests.conftest import BIN, ROOT, lis, run
from tests.report.build_inputs import IMAGE


def test_the_rendered_files_are_current():
    r = lis(["lis", "pipeline", "check"])
    assert r.stdout.startswith("ok:"), r.stdout


def test_every_stage_is_a_lis_command_with_a_log():
    for job in snakemake_jobs(ROOT):
        assert job.cmd.startswith("lis "), job
        assert "--log logs/" in job.cmd, job


def test_snakemake_and_dvc_run_the_same_jobs():
    """Both files are rendered from one declaration; read back by their own tools (Snakemake's DAG, DVC's
    index, interpolated), every job has the same command, dependencies, params and outputs."""
    assert compare(snakemake_jobs(ROOT), dvc_stages(ROOT)) == []


@pytest.mark.parametrize("path, edit", [
    ("dvc.yaml", lambda t: t.replace("--out paper_figures", "--out paper_figures --verbose")),
    ("workflow/rules/stages.smk", lambda t: t.replace("priority: 50", "priority: 5", 1)),
    ("workflow/rules/stages.smk", None),
])
def test_a_generated_file_edited_by_hand_is_caught(repo_copy, path, edit):
    target = repo_copy / path
    if edit is None:
        target.unlink()
    else:
        text = target.read_text()
        assert edit(text) != text
        target.write_text(edit(text))
    r = lis(["lis", "pipeline", "check", "--root", str(repo_copy)], check=False)
    assert r.returncode == 1, r.stdout
    assert f"{path} is not what lis/stages/ renders: run `lis pipeline write`" in r.stderr, r.stderr
    assert "1 problem(s)" in r.stderr


def _edit_stage(repo, module, old, new, regenerate=True):
    """Edit lis/stages/<module>.py in the copy (and render its files again, as `lis pipeline write` would)."""
    path = repo / "lis" / "stages" / f"{module}.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    if regenerate:
        lis(["lis", "pipeline", "write", "--root", str(repo)])


def test_a_stage_edited_without_rendering_is_caught(repo_copy):
    """Both generated files are stale after an edit to a declaration, and the check names both."""
    _edit_stage(repo_copy, "report", "--log logs/report.log", "--log logs/report-2.log", regenerate=False)
    r = lis(["lis", "pipeline", "check", "--root", str(repo_copy)], check=False)
    assert r.returncode == 1
    assert "dvc.yaml is not what" in r.stderr and "workflow/rules/stages.smk is not what" in r.stderr, r.stderr


@pytest.mark.slow
def test_one_edit_to_a_declaration_changes_both_tools(repo_copy):
    """One edit in lis/stages (and `lis pipeline write`): Snakemake and DVC both see it, and still agree."""
    _edit_stage(repo_copy, "report", 'params=("report", ', 'params=("report", "image", ')
    assert lis(["lis", "pipeline", "check", "--root", str(repo_copy)]).stdout.startswith("ok:")
    snake, dvc = snakemake_jobs(repo_copy), dvc_stages(repo_copy)
    assert compare(snake, dvc) == []
    report = next(d for d in dvc if "paper_figures/index.md" in d.outs)
    assert "image" in report.params
    assert "image" in next(j for j in snake if j.name == "report").params


def _new_stage() -> str:
    """The whole module of the example stage in docs/extending.md (its python block under "a pipeline stage"):
    the test runs what the docs show."""
    text = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    block = text[text.index("### a pipeline stage"):].split("```python\n", 1)[1].split("```", 1)[0]
    assert "STAGE = Stage(" in block and "OPTIONS = (" in block
    arch = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    shown = arch[arch.index("### Adding a stage: one module"):].split("```python\n", 1)[1].split("```", 1)[0]
    assert shown in block  # docs/architecture.md shows the same stage
    return block


@pytest.mark.slow
def test_a_new_stage_is_one_module(repo_copy):
    """Adding a stage is its module in lis/stages/: `lis pipeline write` renders its rule and its DVC stage,
    its command is made from the declaration (options, --help, --set), and Snakemake plans it."""
    (repo_copy / "lis/stages/image_facts.py").write_text(_new_stage())
    env = {"PYTHONPATH": str(repo_copy)}
    run([BIN / "lis", "pipeline", "write"], cwd=repo_copy, env=env)
    assert run([BIN / "lis", "pipeline", "check"], cwd=repo_copy, env=env).stdout.startswith("ok:")
    assert "rule image_facts:" in (repo_copy / "workflow/rules/stages.smk").read_text()
    assert "  image_facts:\n    cmd: lis image-facts" in (repo_copy / "dvc.yaml").read_text()
    assert any("data/stages/image_facts/facts.json" in d.outs for d in dvc_stages(repo_copy))

    help_text = run([BIN / "lis", "image-facts", "--help"], cwd=repo_copy, env=env).stdout
    assert "The image stage's manifest." in help_text and "--set" in help_text and "Decimals of the size in GB." in help_text
    (repo_copy / "data/image").mkdir(parents=True)
    (repo_copy / "data/image/manifest.json").write_text(json.dumps(IMAGE))
    r = run([BIN / "lis", "image-facts", "--set", "image.user=someone", "--digits", "0"], cwd=repo_copy, env=env)
    facts = json.loads((repo_copy / "data/stages/image_facts/facts.json").read_text())
    assert facts["user"] == "someone" and r.stdout.strip() == f"{facts['tag']}: 1.0 GB"
    assert facts["size_gb"] == 1.0 and IMAGE["image"]["size_mb"] / 1024 > 1.2  # --digits 0 (by default 1: 1.2)
    bad = run([BIN / "lis", "image-facts", "--digits", "9"], cwd=repo_copy, env=env, check=False)
    assert bad.returncode == 2 and "--digits" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1

    (repo_copy / "data/stages/image_facts/facts.json").unlink()  # Snakemake plans the job that makes it again
    plan = run([BIN / "snakemake", "-n", "--cores", "1", "data/stages/image_facts/facts.json"], cwd=repo_copy,
               env=env).stdout
    assert re.search(r"^image_facts\s+1$", plan, re.M), plan[-2000:]  # one job of it in the plan's job stats


def test_a_stages_code_is_what_its_command_imports():
    """The code deps are computed from each command's imports: the scorers and the prompt templates for an
    evaluation, the templates for the report and not the agent loop, the card's code without the sandbox; a
    folder stands for its files only when the stage runs all of them."""
    from lis.pipeline.code_deps import package_data, stage_code

    def deps(name):
        return stage_code(registry.stage(name).entry)

    ev = deps("eval_sandbox")
    assert any(f.startswith("lis/rewards/") or f == "lis/rewards" for f in ev), ev
    assert any(f.startswith("lis/prompts/templates") for f in ev) and "lis/stages/evaluation.py" in ev and "lis/cli/stage_command.py" in ev
    report = deps("report")
    assert "lis/report/templates" in report and "lis/agent/loop.py" not in report and "lis/stages/report.py" in report and "lis/cli/stage_command.py" in report
    card = deps("model_card")
    assert not any(f.startswith("lis/sandbox") for f in card) and "lis/stages/model_card.py" in card
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
    cli = copy / "lis" / "stages" / "report.py"
    cli.write_text(cli.read_text() + "\n\ndef _late():\n    from lis.agent import loop  # noqa: F401\n")
    assert "lis/agent/loop.py" not in code_deps.stage_code("lis.stages.report:run")
    for name in [m for m in sys.modules if m == "lis" or m.startswith("lis.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(copy))
    try:
        fresh = importlib.import_module("lis.pipeline.code_deps")
        assert fresh.PACKAGE_ROOT == copy and fresh is not code_deps
        assert "lis/agent/loop.py" in fresh.stage_code("lis.stages.report:run")
    finally:  # the copy's modules leave with the test (those it replaced come back with monkeypatch)
        for name in [m for m, mod in sys.modules.items() if str(getattr(mod, "__file__", "")).startswith(str(copy))]:
            del sys.modules[name]


def test_each_stage_entry_is_the_function_its_command_runs(tmp_path):
    assert check.entry_problems(ROOT, command_entry) == []
    copy = tmp_path / "lis" / "stages"
    shutil.copytree(ROOT / "lis" / "stages", copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / "sft_replicate.py"  # `lis train sft` runs lis/stages/sft.py: a replicate cannot run grpo's
    path.write_text(path.read_text().replace('runs="sft"', 'runs="grpo"'))
    assert check.entry_problems(tmp_path, command_entry) == [
        "stage sft_replicate: entry lis.stages.grpo:run but its command runs lis.stages.sft:run"]


def test_a_command_line_that_does_not_fit_the_declared_options_is_named():
    """A stage's command is made from its declaration: each word of its command line is a declared option
    (OPTIONS), a shared one (--profile, --log) or an --option PATH pair naming one of its deps or outputs."""
    from dataclasses import replace

    from lis.cli import stage_command
    from lis.stages import grpo

    stage = registry.stage("grpo")
    names = [o.flags for o in stage_command.options(stage, grpo.OPTIONS)]
    assert names == ["--init", "--out", "--logs", "--image-manifest", "--data", "--mode", "--seed-offset"]
    for cmd, problem in (
            (stage.cmd + " --epochs 3", "--epochs 3 is neither one of its deps nor one of its outputs"),
            (stage.cmd + " --seed-offset", "--seed-offset in its command has no value"),
            (stage.cmd.replace("--data ${item}", "-d ${item}"), "its command is not --option PATH pairs (-d ${item})")):
        with pytest.raises(LisError, match=re.escape(problem)):
            stage_command.options(replace(stage, cmd=cmd), grpo.OPTIONS)


def test_the_registry_orders_stages_by_what_they_read(tmp_path):
    """The order is computed from deps and outs: every stage after those whose outputs it reads; a
    module without STAGE is shared work; a misnamed STAGE and a cycle are one-line errors."""
    names = [s.name for s in registry.stages()]
    assert len(names) == 21 and sorted(names) == sorted(set(names))
    for before, after in [("image", "teacher"), ("tasks", "eval_sandbox"), ("teacher", "sft"), ("sft", "grpo"),
                          ("sft_replicate", "grpo_replicate"), ("sandbox_memory", "storage"),
                          ("eval_vanilla", "behaviour"), ("behaviour", "report"), ("throughput", "report")]:
        assert names.index(before) < names.index(after), (before, after, names)
    assert names[-1] == "report"
    copy = tmp_path / "stages"
    shutil.copytree(ROOT / "lis" / "stages", copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert "evaluation" not in [s.name for s in registry.stages(ROOT / "lis" / "stages")]  # the eval_* stages' work
    image = copy / "image.py"
    image.write_text(image.read_text().replace('deps=("${image.context}",)', 'deps=("${image.context}", "data/models/sft")'))
    with pytest.raises(LisError, match="the stages .*image.* depend on each other's outputs"):
        registry.stages(copy)
    other = tmp_path / "other"
    shutil.copytree(ROOT / "lis" / "stages", other, ignore=shutil.ignore_patterns("__pycache__"))
    (other / "storage.py").write_text((other / "storage.py").read_text().replace('name="storage"', 'name="store"'))
    with pytest.raises(LisError, match=r"STAGE must be Stage\(name='storage'"):
        registry.stages(other)


def test_the_generated_files_are_rendered_from_the_registry():
    """The repository's dvc.yaml and stages.smk are exactly what lis/stages renders."""
    assert (ROOT / "dvc.yaml").read_text() == dvc_file.render(ROOT)
    assert (ROOT / snakemake_file.PATH).read_text() == snakemake_file.render(ROOT)


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

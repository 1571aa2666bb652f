"""The Snakefile's rules and dvc.yaml's stages declare the same commands, deps, params and outputs."""
from __future__ import annotations

import pytest
import yaml

from lis.cli.commands import command_module
from lis.pipeline import compare, dvc_stages, snakemake_jobs
from tests.conftest import ROOT, run


def test_repository_declarations_agree():
    r = run(["lis", "pipeline", "check"])
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
    r = run(["lis", "pipeline", "check", "--root", str(repo_copy)], check=False)
    assert r.returncode == 1 and "difference(s)" in r.stderr


@pytest.mark.slow
def test_params_drift_in_snakefile_is_caught(repo_copy):
    rule = repo_copy / "workflow/rules/report.smk"
    text = rule.read_text()
    assert 'stage_params("report", ' in text
    rule.write_text(text.replace('stage_params("report", ', 'stage_params("report", "image", ', 1))
    problems = compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy), command_module)
    assert any("params differ: only snakemake ['image']" in p for p in problems), problems


def _edit_both(repo, rule_file, old, new, dvc_fn):
    path = repo / rule_file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    _edit_dvc(repo, dvc_fn)


def _eval_stages(stages):
    return [stages[k] for k in ("eval_vanilla", "eval_sandbox")] + [stages["eval_inline"]["do"]]


@pytest.mark.slow
def test_code_a_stage_runs_but_does_not_declare_is_caught(repo_copy):
    """Both files agree, but neither declares the scorers the eval stages run."""
    def drop(stages):
        for st in _eval_stages(stages):
            st["deps"].remove("lis/rewards")

    _edit_both(repo_copy, "workflow/rules/eval.smk", '"lis/prompts", "lis/rewards",', '"lis/prompts",', drop)
    problems = compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy), command_module)
    assert any("runs code it does not declare as a dependency: lis/rewards/" in p for p in problems), problems


@pytest.mark.slow
def test_code_a_stage_declares_but_does_not_run_is_caught(repo_copy):
    def add(stages):
        stages["report"]["deps"].append("lis/agent")

    _edit_both(repo_copy, "workflow/rules/report.smk", 'code(*CORE, "lis/report",', 'code(*CORE, "lis/agent", "lis/report",',
               add)
    problems = compare(snakemake_jobs(repo_copy), dvc_stages(repo_copy), command_module)
    assert any("declares code it does not run: lis/agent" in p for p in problems), problems


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

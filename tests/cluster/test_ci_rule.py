"""scripts/ci-cluster-rule.sh: CI runs the Slurm cluster test when workflow/ changed since the previous
landed commit, and when that commit is unknown. Real git repositories, real script."""
from __future__ import annotations

import shutil

import pytest

from tests.conftest import ROOT, run

RULE = "scripts/ci-cluster-rule.sh"


def git(repo, *args):
    return run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo).stdout.strip()


def commit(repo, path, text="x\n"):
    f = repo / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(f.read_text() + text if f.exists() else text)
    git(repo, "add", path)
    git(repo, "commit", "-qm", f"edit {path}")
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    (r / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / RULE, r / RULE)
    git(r, "init", "-q")
    git(r, "add", RULE)
    git(r, "commit", "-qm", "first")
    return r


def rule(repo, **env):
    r = run(["bash", RULE], cwd=repo, check=False, env={"LIS_CI_BASE": "", "LIS_CI_CLUSTER": "", **env})
    return r.returncode, r.stderr


def test_first_commit_is_unknown_so_it_runs(repo):
    rc, why = rule(repo)
    assert rc == 0 and "no parent" in why


def test_runs_when_the_last_commit_touched_workflow_and_not_otherwise(repo):
    commit(repo, "workflow/profiles/slurm/config.yaml")
    rc, why = rule(repo)
    assert rc == 0 and "workflow/profiles/slurm/config.yaml" in why
    commit(repo, "lis/other.py")
    rc, why = rule(repo)
    assert rc == 1 and "skip" in why
    commit(repo, "tests/cluster/test_slurm.py")   # the cluster test itself is watched too
    assert rule(repo)[0] == 0


def test_a_push_of_several_commits_is_judged_from_lis_ci_base(repo):
    before = git(repo, "rev-parse", "HEAD")
    commit(repo, "workflow/rules/eval.smk")
    commit(repo, "README.md")                     # the tip alone does not touch workflow/ ...
    assert rule(repo)[0] == 1
    rc, why = rule(repo, LIS_CI_BASE=before)      # ... the push as a whole does
    assert rc == 0 and "workflow/rules/eval.smk" in why
    rc, why = rule(repo, LIS_CI_BASE="0" * 40)    # a base this clone does not have: unknown
    assert rc == 0 and "not an ancestor" in why


def test_overrides(repo):
    commit(repo, "README.md")
    assert rule(repo, LIS_CI_CLUSTER="always")[0] == 0
    commit(repo, "workflow/x.smk")
    assert rule(repo, LIS_CI_CLUSTER="never")[0] == 1
    rc, why = rule(repo, LIS_CI_CLUSTER="sometimes")
    assert rc == 2 and "always or never" in why

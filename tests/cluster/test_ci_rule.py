"""scripts/ci-cluster-rule.sh: CI runs the Slurm cluster test when workflow/ (or the cluster script or
tests) differs from the state the cluster test last passed on (.ci/cluster-tested, written by
`make test-cluster`), however many commits land at once. Real git repositories, real script."""
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


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    (r / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / RULE, r / RULE)
    git(r, "init", "-q")
    git(r, "add", RULE)
    git(r, "commit", "-qm", "first")
    commit(r, "workflow/rules/common.smk")
    return r


def rule(repo, *args, **env):
    r = run(["bash", RULE, *args], cwd=repo, check=False, env={"LIS_CI_CLUSTER": "", **env})
    return r.returncode, r.stderr


def record(repo):
    assert rule(repo, "--record")[0] == 0
    git(repo, "add", ".ci/cluster-tested")
    git(repo, "commit", "-qm", "cluster test passed")


def test_no_record_means_run(repo):
    rc, why = rule(repo)
    assert rc == 0 and "no record" in why


def test_skips_only_while_the_watched_files_are_as_last_tested(repo):
    record(repo)
    rc, why = rule(repo)
    assert rc == 1 and "skip" in why
    commit(repo, "lis/other.py")                  # not watched
    commit(repo, "README.md")
    assert rule(repo)[0] == 1
    commit(repo, "workflow/profiles/slurm/config.yaml")
    rc, why = rule(repo)
    assert rc == 0 and "changed since the cluster test last passed" in why


def test_several_commits_landing_at_once_still_run_it(repo):
    """The tip alone does not touch workflow/, an earlier commit of the same push does."""
    record(repo)
    commit(repo, "workflow/rules/common.smk")
    commit(repo, "README.md")
    assert rule(repo)[0] == 0
    record(repo)                                   # the cluster test passed on the new state
    assert rule(repo)[0] == 1


def test_the_cluster_tests_and_script_are_watched_too(repo):
    record(repo)
    commit(repo, "tests/cluster/test_slurm.py")
    assert rule(repo)[0] == 0
    record(repo)
    commit(repo, "scripts/slurm-cluster.sh")
    assert rule(repo)[0] == 0


def test_an_unreadable_record_means_run(repo):
    record(repo)
    (repo / ".ci/cluster-tested").chmod(0)
    rc, why = rule(repo)
    if rc == 1:   # root reads any file: make it a wrong record instead
        (repo / ".ci/cluster-tested").chmod(0o644)
        (repo / ".ci/cluster-tested").write_text("garbage\n")
        rc, why = rule(repo)
    assert rc == 0


def test_overrides(repo):
    record(repo)
    assert rule(repo, LIS_CI_CLUSTER="always")[0] == 0
    commit(repo, "workflow/x.smk")
    assert rule(repo, LIS_CI_CLUSTER="never")[0] == 1
    rc, why = rule(repo, LIS_CI_CLUSTER="sometimes")
    assert rc == 2 and "always or never" in why

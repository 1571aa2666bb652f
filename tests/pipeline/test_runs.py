"""Real Snakemake and DVC runs of the pipeline in a fresh copy of the repository.

The sandbox image itself is shared with the machine (same content hash → reused), so these runs
exercise the stage logic, caching and re-run rules, not a second 60-second image build.
"""
from __future__ import annotations

import json
import re
import time

import pytest
import yaml

from tests.conftest import run, small_matrix

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.training]


def jobs_run(stdout_err: str) -> list[str]:
    """The stages Snakemake executed, from the shell commands it prints (`lis <stage> ...`)."""
    return sorted(set(re.findall(r"^(?:Shell command: )?lis (\w+)", stdout_err, flags=re.M)))


def snakemake(repo, *args):
    # PYTHONPATH: the stages run the copy's own code (the tests edit it)
    r = run(["snakemake", "--cores", "2", "--printshellcmds", "paper", *args], cwd=repo,
            env={"PYTHONPATH": str(repo)})
    return r.stdout + r.stderr


def edit_code(repo, rel, old, new):
    path = repo / rel
    text = path.read_text()
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1))


def set_param(repo, section, key, value, file="params.yaml"):
    path = repo / file
    data = yaml.safe_load(path.read_text())
    data[section][key] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False))


# the stages of the external-model matrix (small_matrix): no training stage runs
ALL = ["behaviour", "bench", "efficiency", "eval", "image", "model", "report", "tasks", "throughput"]
# what an eval job's outputs feed
AFTER_EVAL = ["behaviour", "efficiency", "eval", "report"]


@pytest.fixture
def pipeline_repo(repo_copy, tiny_dir):
    """A repository copy evaluating the tiny agent as an external model on math and long context."""
    small_matrix(repo_copy, external=tiny_dir)
    return repo_copy


def test_snakemake_runs_then_reruns_nothing(pipeline_repo, image_tag):
    repo_copy = pipeline_repo
    out = snakemake(repo_copy, "--config", "profile=ci")
    assert jobs_run(out) == ALL, out
    for mode in ("vanilla", "sandbox"):
        assert (repo_copy / f"data/eval/ext/math/{mode}/metrics.json").is_file()
    assert (repo_copy / "data/eval/ext/long_context/sandbox_inline/metrics.json").is_file()
    assert (repo_copy / "data/models/ext/card.json").is_file()
    assert (repo_copy / "paper_figures/tables/table2_main.md").is_file()
    assert not (repo_copy / "data/models/sft").exists()  # an external model: nothing trained
    manifest = json.loads((repo_copy / "data/image/manifest.json").read_text())
    assert manifest["image"]["tag"] == image_tag and manifest["stage"] == "image"
    assert "lis-sandbox" in (repo_copy / "paper_figures/index.md").read_text()
    assert (repo_copy / "logs/image.log").stat().st_size > 0
    t0 = time.monotonic()
    out = snakemake(repo_copy, "--config", "profile=ci")
    took = time.monotonic() - t0
    assert "Nothing to be done" in out and jobs_run(out) == []
    assert took < 10, f"no-op rerun took {took:.1f}s"

    set_param(repo_copy, "report", "title", "Another title")
    assert jobs_run(snakemake(repo_copy, "--config", "profile=ci")) == ["report"]
    assert "Another title" in (repo_copy / "paper_figures/index.md").read_text()

    # code is a dependency: a change to the report's code re-renders the report only ...
    edit_code(repo_copy, "lis/cli/report.py", "from __future__ import annotations\n",
              "from __future__ import annotations\n\n_EDITED = True\n")
    assert jobs_run(snakemake(repo_copy, "--config", "profile=ci")) == ["report"]
    # ... a change to a scorer re-runs every eval job, which re-scores from the journal and runs no
    # episode; what reads the eval outputs follows
    edit_code(repo_copy, "lis/rewards/text.py", "from __future__ import annotations\n",
              "from __future__ import annotations\n\n_EDITED = True\n")
    out = snakemake(repo_copy, "--config", "profile=ci")
    assert jobs_run(out) == AFTER_EVAL and "lis tasks" not in out and "lis image" not in out, out
    log = (repo_copy / "logs/eval/ext/math/sandbox.log").read_text()
    last = log[max(0, log.rindex("already done") - 200):]
    assert re.search(r"(\d+) episodes, \1 already done", last) and "scoring" in last, last

    set_param(repo_copy, "image", "name", "lis-sandbox-renamed")  # same content: re-tagged, not rebuilt
    try:
        out = snakemake(repo_copy, "--config", "profile=ci")
        # the image stage and what depends on it (sandbox evals, sandbox benchmarks, analyses, report);
        # not tasks, not vanilla evals
        assert "lis image" in out and "--mode sandbox " in out, out
        assert "--mode vanilla" not in out and "lis tasks" not in out and "lis model" not in out
        manifest = json.loads((repo_copy / "data/image/manifest.json").read_text())
        assert manifest["image"]["tag"].startswith("lis-sandbox-renamed:")
        assert manifest["image"]["action"] == "retagged"
    finally:
        run(["docker", "rmi", image_tag.replace("lis-sandbox:", "lis-sandbox-renamed:")], check=False)


def test_profile_overlay_change_reruns_only_its_stage(pipeline_repo, image_tag):
    repo_copy = pipeline_repo
    snakemake(repo_copy, "--config", "profile=ci")
    set_param(repo_copy, "report", "title", "CI only", file="workflow/params/ci.yaml")
    assert jobs_run(snakemake(repo_copy, "--config", "profile=ci")) == ["report"]
    assert "profile `ci`" in (repo_copy / "paper_figures/index.md").read_text()
    # an eval param: the eval jobs re-run, resume from their journals (no episode repeated), what
    # reads their outputs follows
    set_param(repo_copy, "eval", "workers", 1, file="workflow/params/ci.yaml")
    out = snakemake(repo_copy, "--config", "profile=ci")
    assert jobs_run(out) == AFTER_EVAL, out

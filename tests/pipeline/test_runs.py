"""Real Snakemake runs of the pipeline: the session's one `make paper` (tests/pipeline/conftest.py), a second
run with nothing to do, and the re-run rules, each on a copy that keeps modification times.

The sandbox image itself is shared with the machine (same content hash → reused), so these runs exercise
the stage logic, caching and re-run rules, not a second image build.
"""
from __future__ import annotations

import json
import re
import resource

import pytest
import yaml

from tests.conftest import BIN, run
from tests.pipeline.conftest import fork

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.training]

# every rule of the small trained matrix (tests/conftest.py small_matrix), `paper` the target
ALL = ["base", "behaviour", "context_tasks", "efficiency", "eval_inline", "eval_sandbox", "eval_vanilla", "grpo",
       "image", "llm_rl", "paper", "report", "sandbox_memory", "sft", "storage", "tasks", "teacher", "throughput"]
# what an eval job's outputs feed
AFTER_EVAL = ["behaviour", "efficiency", "eval_inline", "eval_sandbox", "eval_vanilla", "paper", "report"]
EVAL_RULES = ["eval_inline", "eval_sandbox", "eval_vanilla"]


def rules_run(output: str) -> list[str]:
    """The rules of the jobs Snakemake finished, from its `Finished jobid: N (Rule: NAME)` lines."""
    return sorted(set(re.findall(r"^Finished jobid: \d+ \(Rule: (\w+)\)", output, flags=re.M)))


def rules_planned(output: str) -> list[str]:
    """The rules of the jobs a dry run (-n) would run, from its first `Job stats` table."""
    table = output.split("Job stats:", 1)[1].split("total", 1)[0] if "Job stats:" in output else ""
    return sorted(m for m in re.findall(r"^(\w+)\s+\d+\s*$", table, flags=re.M) if m != "job")


def children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def snakemake(repo, *args):
    # PYTHONPATH: the stages run the copy's own code (the tests edit it)
    r = run(["snakemake", "--cores", "2", "--printshellcmds", *args], cwd=repo, env={"PYTHONPATH": str(repo)},
            timeout=1800)
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


def test_make_paper_ran_every_stage_and_a_second_run_has_nothing_to_do(trained_run, image_tag):
    """The README's main command in a fresh checkout (sharing this machine's venv) on the ci profile's small
    trained matrix: every stage ran once; then `make paper` and `snakemake paper` have nothing to do."""
    repo = trained_run.repo
    assert rules_run(trained_run.output) == ALL, trained_run.output[-3000:]
    for model in ("grpo-files", "llm-rl"):
        for mode in ("vanilla", "sandbox"):
            assert (repo / f"data/eval/{model}/math/{mode}/metrics.json").is_file()
    assert (repo / "data/eval/grpo-files/long_context/sandbox_inline/metrics.json").is_file()
    for model in ("sft", "grpo-files", "llm-rl"):
        assert (repo / f"data/models/{model}/manifest.json").is_file(), model
    assert (repo / "paper_figures/tables/table2_main.md").is_file()
    assert (repo / "paper_figures/index.md").is_file()
    manifest = json.loads((repo / "data/image/manifest.json").read_text())
    assert manifest["image"]["tag"] == image_tag and manifest["stage"] == "image"
    assert "lis-sandbox" in (repo / "paper_figures/index.md").read_text()
    assert (repo / "logs/image.log").stat().st_size > 0

    # fast, in CPU seconds of the commands (the suite's other worker shares the 2 cores and stretches wall time)
    cpu0 = children_cpu_s()
    second = run(["make", "paper", f"VENV={BIN.parent}", "CORES=2"], cwd=repo, env={"PYTHONPATH": str(repo)})
    assert "Nothing to be done" in second.stdout + second.stderr
    assert children_cpu_s() - cpu0 < 15
    cpu0 = children_cpu_s()
    out = snakemake(repo, "paper", "--config", "profile=ci")
    took = children_cpu_s() - cpu0
    assert "Nothing to be done" in out and rules_run(out) == []
    assert took < 10, f"no-op rerun took {took:.1f} s of CPU"


def test_params_and_code_rerun_only_what_reads_them(trained_run, tmp_path, image_tag):
    repo = fork(trained_run, tmp_path / "repo")

    set_param(repo, "report", "title", "Another title")
    assert rules_run(snakemake(repo, "paper", "--config", "profile=ci")) == ["paper", "report"]
    assert "Another title" in (repo / "paper_figures/index.md").read_text()

    # code is a dependency: a change to the report's code re-renders the report only ...
    edit_code(repo, "lis/stages/report.py", "from __future__ import annotations\n",
              "from __future__ import annotations\n\n_EDITED = True\n")
    assert rules_run(snakemake(repo, "paper", "--config", "profile=ci")) == ["paper", "report"]

    # ... a change to a scorer re-runs every stage that scores: the teacher (its episodes' rewards pick what
    # SFT learns from) and what follows it, and every eval job; never the image, the task sets or the base
    edit_code(repo, "lis/rewards/text.py", "from __future__ import annotations\n",
              "from __future__ import annotations\n\n_EDITED = True\n")
    planned = rules_planned(snakemake(repo, "paper", "--config", "profile=ci", "-n"))
    assert planned == sorted({"teacher", "sft", "grpo", "llm_rl", "throughput", *AFTER_EVAL}), planned
    # the eval jobs among them re-score from their journals and run no episode (the trained models kept:
    # only the eval rules and what reads them are allowed to run)
    out = snakemake(repo, "paper", "--config", "profile=ci", "--allowed-rules", *AFTER_EVAL)
    assert rules_run(out) == AFTER_EVAL and "lis tasks" not in out and "lis image" not in out, out[-3000:]
    log = (repo / "logs/eval/grpo-files/math/sandbox.log").read_text()
    last = log[max(0, log.rindex("already done") - 200):]
    assert re.search(r"(\d+) episodes, \1 already done", last) and "scoring" in last, last

    # the image renamed (same content: re-tagged, not rebuilt) is an input of what runs sandboxes, not of the
    # task sets nor of a vanilla evaluation: the rule graph's edges from the image rule say so
    set_param(repo, "image", "name", "lis-sandbox-renamed")
    try:
        graph = snakemake(repo, "paper", "--config", "profile=ci", "--rulegraph")
        names = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', graph, flags=re.M))
        edges = {(names[a], names[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", graph, flags=re.M)}
        from_image = sorted(b for a, b in edges if a == "image")
        assert {"eval_sandbox", "eval_inline", "teacher", "grpo", "llm_rl", "throughput",
                "sandbox_memory"} <= set(from_image), from_image
        assert "eval_vanilla" not in from_image and "tasks" not in from_image, from_image
        planned = rules_planned(snakemake(repo, "paper", "--config", "profile=ci", "-n"))
        assert "image" in planned and "tasks" not in planned and "context_tasks" not in planned, planned
        assert "base" not in planned, planned
        out = snakemake(repo, "data/image/manifest.json", "--config", "profile=ci")
        assert "lis image" in out and rules_run(out) == ["image"], out[-3000:]
        manifest = json.loads((repo / "data/image/manifest.json").read_text())
        assert manifest["image"]["tag"].startswith("lis-sandbox-renamed:")
        assert manifest["image"]["action"] == "retagged"
    finally:
        run(["docker", "rmi", image_tag.replace("lis-sandbox:", "lis-sandbox-renamed:")], check=False)


def test_profile_overlay_change_reruns_only_its_stage(trained_run, tmp_path):
    repo = fork(trained_run, tmp_path / "repo")
    set_param(repo, "report", "title", "CI only", file="workflow/params/ci.yaml")
    assert rules_run(snakemake(repo, "paper", "--config", "profile=ci")) == ["paper", "report"]
    assert "profile `ci`" in (repo / "paper_figures/index.md").read_text()
    # an eval param: the eval jobs re-run, resume from their journals (no episode repeated), what
    # reads their outputs follows; no training stage reads it
    set_param(repo, "eval", "workers", 1, file="workflow/params/ci.yaml")
    out = snakemake(repo, "paper", "--config", "profile=ci")
    assert rules_run(out) == AFTER_EVAL, out[-3000:]
    log = (repo / "logs/eval/llm-rl/math/vanilla.log").read_text()
    last = log[max(0, log.rindex("already done") - 200):]
    assert re.search(r"(\d+) episodes, \1 already done", last), last

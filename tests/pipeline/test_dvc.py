"""The pipeline through DVC, and versioned artifacts that travel, on the session's one pipeline run.

Real DVC on a copy (`cp -a`) of the run `make paper` made with Snakemake (tests/pipeline/conftest.py: the ci
profile, the small trained matrix, GRPO on files and the LLM-RL baseline, math and long context):
  `dvc commit` records Snakemake's outputs as DVC's -> `dvc repro` runs nothing (< 10 s of CPU): the two
  declarations agree on every command, dependency, param and output -> `dvc push` to the default remote
  (.dvc/config: a folder beside the checkout) -> `git clone` + `dvc pull` -> `dvc repro` runs nothing and
  paper_figures/ is the same, file for file;
  a param change (params.yaml, then the profile overlay) re-runs only the report; a code edit marks
  exactly the stages that import it;
  two experiments (`dvc exp run -S`) on a cheap knob (the sandbox memory benchmark's settling time:
  sandbox_memory, storage and report re-run) compared with `dvc exp show`, `dvc metrics diff` and
  `dvc plots diff`; and the data-source ablation of Table 7 as an experiment on params alone
  (`-S jobs.grpo_data=[files,math]`): only GRPO on the math variant and its evaluations run.
"""
from __future__ import annotations

import hashlib
import json
import resource
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run
from tests.pipeline.conftest import fork

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.training]

EXPERIMENTS = {"mem-short": 0.5, "mem-long": 1.5}   # sandbox_memory.settle_s (the ci overlay: 1.0, n 1)


def dvc(repo, *args, check=True):
    # PYTHONPATH: the stages run the copy's own code
    return run(["dvc", *args], cwd=repo, env={"PYTHONPATH": str(repo)}, check=check, timeout=1800)


def git(repo, *args):
    return run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo).stdout


def stages_run(stdout: str) -> list[str]:
    return sorted(line.split("'")[1] for line in stdout.splitlines() if line.startswith("Running stage '"))


def children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def tree_hashes(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def set_param(repo, section, key, value, file="params.yaml"):
    path = repo / file
    data = yaml.safe_load(path.read_text())
    data[section][key] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def edit_code(repo, rel, old, new):
    path = repo / rel
    text = path.read_text()
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1))


def uncached_outputs(dvc_yaml: Path) -> list[str]:
    """Outputs declared `cache: false`: DVC neither caches nor pushes them (and .gitignore keeps them out of
    git), so they would not travel and experiments would show them missing."""
    found = []
    for stage in yaml.safe_load(dvc_yaml.read_text())["stages"].values():
        body = stage.get("do", stage)
        for kind in ("outs", "metrics", "plots"):
            for e in body.get(kind) or []:
                if isinstance(e, dict):
                    found += [path for path, opts in e.items() if isinstance(opts, dict) and opts.get("cache") is False]
    return found


def test_every_dvc_output_is_versioned():
    assert uncached_outputs(ROOT / "dvc.yaml") == []


# every stage of the small trained matrix (tests/conftest.py small_matrix), as DVC names them
STAGES = ("image", "tasks@math", "tasks@long_context", "context_tasks", "base", "teacher", "sft", "grpo@files",
          "llm_rl", "eval_vanilla@grpo-files-math", "eval_sandbox@grpo-files-math", "eval_inline@grpo-files",
          "behaviour", "efficiency", "sandbox_memory", "throughput", "storage", "report")


@pytest.mark.timeout(1500)  # the Table-7 experiment trains GRPO on 2 cores: minutes
def test_dvc_takes_over_the_run_travels_through_the_remote_and_compares_experiments(trained_run, tmp_path):
    repo = fork(trained_run, tmp_path / "repo")

    # before: DVC has never run a stage here, so every stage of dvc.yaml is out of date in its eyes
    status = json.loads(dvc(repo, "status", "--json").stdout)
    for stage in STAGES:
        assert any(k == stage or k.startswith(stage + ":") or k.endswith(":" + stage) for k in status), (stage, sorted(status))
    # dvc commit records what Snakemake wrote (commands, deps, params, outputs) as DVC's own run ...
    dvc(repo, "commit", "--force")
    lock = yaml.safe_load((repo / "dvc.lock").read_text())["stages"]
    for stage in STAGES:
        assert stage in lock, (stage, sorted(lock))

    # ... and then nothing runs, fast: Snakemake's run satisfies every stage DVC declares. Measured in CPU
    # seconds (DVC's own work: about 6 s), as other processes on a shared 2-core machine can stretch its wall time
    t0, cpu0 = time.monotonic(), children_cpu_s()
    r = dvc(repo, "repro")
    noop_s, noop_cpu_s = time.monotonic() - t0, children_cpu_s() - cpu0
    assert stages_run(r.stdout) == [] and noop_cpu_s < 10, (noop_s, noop_cpu_s, r.stdout[-2000:])

    # the run, versioned: dvc.lock committed, outputs pushed to the default remote beside the checkout
    git(repo, "add", "dvc.lock")
    git(repo, "commit", "-qm", "baseline: dvc.lock")
    assert git(repo, "status", "--porcelain") == ""   # DVC's outputs are all ignored by git
    figures = tree_hashes(repo / "paper_figures")
    assert "tables/table2_main.md" in figures and "index.json" in figures
    remote = tmp_path / "lis-dvc-remote"                  # .dvc/config: url = ../../lis-dvc-remote
    assert not remote.exists()
    dvc(repo, "push")
    pushed = [p for p in remote.rglob("*") if p.is_file()]
    assert pushed, "dvc push wrote nothing to the default remote"

    # a colleague's fresh clone: pull, nothing to reproduce, the same figures and metrics
    clone = tmp_path / "clone"
    run(["git", "clone", "-q", str(repo), str(clone)], cwd=tmp_path)
    assert not (clone / "paper_figures/index.md").exists() and not (clone / "data/eval").exists()
    dvc(clone, "pull")
    r = dvc(clone, "repro")
    assert stages_run(r.stdout) == [], r.stdout[-3000:]
    assert tree_hashes(clone / "paper_figures") == figures
    for f in ("data/eval/grpo-files/math/sandbox/metrics.json", "data/train/runs/grpo-files/train_log.csv",
              "data/bench/sandbox_memory.json", "data/image/manifest.json"):
        assert (clone / f).read_bytes() == (repo / f).read_bytes(), f
    status = dvc(clone, "status").stdout
    assert "changed" not in status and "deleted" not in status, status

    # a param re-runs only the stages that read it: the report's title, in params.yaml then in the overlay
    set_param(repo, "report", "title", "DVC title")
    assert stages_run(dvc(repo, "repro").stdout) == ["report"]
    set_param(repo, "report", "title", "DVC overlay", file="workflow/params/ci.yaml")
    assert stages_run(dvc(repo, "repro").stdout) == ["report"]
    assert "DVC overlay" in (repo / "paper_figures/index.md").read_text()
    # the report's code is a dependency of the report stage only; a scorer's, of every eval stage
    with (repo / "lis/report/__init__.py").open("a") as f:
        f.write("\n_EDITED = True\n")
    status = dvc(repo, "status").stdout
    assert "report:" in status and "eval_" not in status and "tasks@" not in status, status
    edit_code(repo, "lis/rewards/text.py", "from __future__ import annotations\n",
              "from __future__ import annotations\n\n_EDITED = True\n")
    status = dvc(repo, "status").stdout
    assert "eval_sandbox@grpo-files-math:" in status and "image:" not in status and "tasks@" not in status, status
    git(repo, "checkout", "--", ".")   # back to the baseline (dvc.lock included); its outputs from the cache
    dvc(repo, "checkout")
    assert dvc(repo, "status").stdout.strip() == "Data and pipelines are up to date.", dvc(repo, "status").stdout

    # two experiments on a cheap knob, compared: how long the memory benchmark lets an idle sandbox settle
    for name, settle in EXPERIMENTS.items():
        r = dvc(repo, "exp", "run", "-n", name, "-S", f"workflow/params/ci.yaml:sandbox_memory.settle_s={settle}")
        assert stages_run(r.stdout) == ["report", "sandbox_memory", "storage"], r.stdout[-3000:]
        assert json.loads((repo / "data/bench/sandbox_memory.json").read_text())["settle_s"] == settle

    show = json.loads(dvc(repo, "exp", "show", "--json").stdout)
    exps = {e["name"]: e["revs"][0]["data"] for b in show for e in (b.get("experiments") or [])}
    assert set(EXPERIMENTS) <= set(exps), json.dumps(show)[:3000]
    for name, settle in EXPERIMENTS.items():   # each carries its params and its metrics, the untouched ones included
        data = exps[name]
        assert data["params"]["workflow/params/ci.yaml"]["data"]["sandbox_memory"]["settle_s"] == settle
        assert data["metrics"]["data/bench/sandbox_memory.json"]["data"]["settle_s"] == settle
        assert data["metrics"]["data/train/runs/grpo-files/metrics.json"]["data"], data["metrics"].keys()
    table = dvc(repo, "exp", "show", "--no-pager", "--csv").stdout
    assert "mem-short" in table and "mem-long" in table and "sandbox_memory.settle_s" in table, table[:3000]

    diff = json.loads(dvc(repo, "metrics", "diff", "mem-short", "mem-long", "--json").stdout)
    assert diff["data/bench/sandbox_memory.json"]["settle_s"] == {"old": 0.5, "new": 1.5, "diff": 1.0}, diff
    assert "data/train/runs/grpo-files/metrics.json" not in diff   # unchanged between them
    header = dvc(repo, "metrics", "diff", "mem-short", "mem-long").stdout.splitlines()[0]
    assert "mem-short" in header and "mem-long" in header, header
    params = json.loads(dvc(repo, "params", "diff", "mem-short", "mem-long", "--json").stdout)
    assert params["workflow/params/ci.yaml"]["sandbox_memory.settle_s"] == {"old": 0.5, "new": 1.5, "diff": 1.0}, params

    plots = json.loads(dvc(repo, "plots", "diff", "mem-short", "mem-long", "--json", "--split").stdout)["data"]
    curves = [k for k in plots if k.endswith("data/train/runs/grpo-files/train_log.csv")]
    assert len(curves) == 1, sorted(plots)
    revisions = {rev for entry in plots[curves[0]] for rev in entry.get("revisions", [])}
    assert revisions == set(EXPERIMENTS), plots[curves[0]]

    # the data-source ablation (Table 7) by params alone: GRPO on the math variant beside files, evaluated
    r = dvc(repo, "exp", "run", "-n", "ablation-math", "-S", "jobs.grpo_data=[files,math]",
            "-S", "jobs.models=[grpo-files,llm-rl,grpo-math]")
    ran = stages_run(r.stdout)
    assert "grpo@math" in ran and "grpo@files" not in ran and "llm_rl" not in ran and "sft" not in ran, ran
    assert "eval_sandbox@grpo-math-math" in ran and "report" in ran, ran
    ablation = json.loads((repo / "data/train/runs/grpo-math/metrics.json").read_text())
    assert ablation["data"] == "math" and ablation["steps"] >= 1 and ablation["errors"] == 0, ablation
    table7 = (repo / "paper_figures/tables/table7_data_ablation.csv").read_text().splitlines()
    assert len(table7) == 3 and table7[1].startswith("files") and table7[2].startswith("math"), table7

    print(f"\ndvc timings (s): no-op repro {noop_s:.1f} ({noop_cpu_s:.1f} CPU)")

"""A real Slurm cluster: scripts/slurm-cluster.sh brings up munged, MariaDB, slurmdbd, slurmctld and
slurmd from Debian's packages on this machine, and a small real target of the pipeline runs through
`snakemake --profile workflow/profiles/slurm` (the executor plugin submits with sbatch and follows the
jobs with sacct). Deselected by default (marker `cluster`): `make test-cluster`; `.ci/run` runs it
when workflow/ changed (scripts/ci-cluster-rule.sh).

The target is an evaluation of the tiny base model on the ci profile's two math tasks in the sandbox:
image, tasks (math), context tasks, base, eval_sandbox — five Slurm jobs, a few minutes on 2 cores.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, copy_repo, run

pytestmark = [pytest.mark.cluster]

SCRIPT = ROOT / "scripts/slurm-cluster.sh"
DIR = Path(os.environ.get("LIS_SLURM_DIR", "/tmp/lis-slurm"))
TARGET = "data/eval/base/math/sandbox/metrics.json"
# the comment the executor plugin gives each job: rule_<rule>[_wildcards_<values>]
JOBS = {"rule_image", "rule_tasks_wildcards_math", "rule_context_tasks", "rule_base",
        "rule_eval_sandbox_wildcards_base_math"}
TIMINGS: dict[str, float] = {}


def cluster(cmd: str, check=True):
    return run(["bash", str(SCRIPT), cmd], check=check, env={"LIS_SLURM_DIR": str(DIR)}, timeout=900)


def daemon_pids() -> dict[str, int]:
    out = {}
    for f in (DIR / "run").glob("*.pid"):
        if not f.name.endswith(".daemon.pid"):
            out[f.stem] = int(f.read_text())
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def slurm(image_tag):
    """The test cluster, brought up here (`up` reuses one that runs) and torn down by the last test."""
    assert importlib.util.find_spec("snakemake_executor_plugin_slurm"), \
        "the Slurm executor plugin is missing: `make test-cluster` installs the slurm extra"
    assert os.geteuid() == 0, "the test cluster's daemons run as root: run the cluster tests as root"
    t0 = time.monotonic()
    cluster("install")
    TIMINGS["install"] = time.monotonic() - t0
    t0 = time.monotonic()
    cluster("up")
    TIMINGS["up"] = time.monotonic() - t0
    env = {"SLURM_CONF": str(DIR / "etc/slurm.conf")}
    yield {"env": env}
    cluster("down", check=False)  # when a test failed before test_down_leaves_nothing_behind; else a no-op


def snakemake(repo, *args, env=None, check=True):
    # PYTHONPATH: the jobs run the copy's own code; LIS_SLURM_ACCOUNT picks the profile's account placeholder
    r = run(["snakemake", "--profile", "workflow/profiles/slurm", "--slurm-init-seconds-before-status-checks", "5",
             *args, "--config", "profile=ci"],  # --config last: it takes every word after it
            cwd=repo, env={"PYTHONPATH": str(repo), **(env or {})}, check=check, timeout=540)
    return r, r.stdout + r.stderr


def sacct(env, run_id) -> list[dict]:
    fields = ["JobIDRaw", "State", "Account", "Partition", "AllocCPUS", "ReqMem", "Comment"]
    r = run(["sacct", "-X", "-P", "-n", "--starttime", "now-1days", "--name", run_id, "-o", ",".join(fields)], env=env)
    return [dict(zip(fields, line.split("|"))) for line in r.stdout.splitlines() if line.strip()]


def mem_mb(req: str) -> int:
    n, unit = float(req[:-1]), req[-1]
    return int(n * {"M": 1, "G": 1024, "T": 1024 * 1024}[unit])


# bounded for CI (a first run takes about 2.5 min on 2 cores): on timeout the fixture still tears the cluster down
@pytest.mark.timeout(720)
def test_pipeline_target_runs_through_slurm(slurm, tmp_path):
    repo = copy_repo(tmp_path / "repo")
    env = {**slurm["env"], "LIS_SLURM_ACCOUNT": "lis-alt"}  # the second account: the placeholder follows the environment

    t0 = time.monotonic()
    r, out = snakemake(repo, TARGET, env=env)
    TIMINGS["run"] = time.monotonic() - t0

    # the outputs, made by the jobs
    metrics = json.loads((repo / TARGET).read_text())
    assert metrics["model"] == "base" and metrics["mode"] == "sandbox" and metrics["n"] == 2 and metrics["errors"] == 0
    for f in ("data/image/manifest.json", "data/tasks/math.jsonl", "data/train/context/files.jsonl",
              "data/models/base/model.safetensors", "logs/eval/base/math/sandbox.log"):
        assert (repo / f).is_file() and (repo / f).stat().st_size > 0, f

    # every job went through Slurm: sacct knows them by the run's job name, with the profile's resources
    m = re.search(r"SLURM run ID: (\S+)", out)
    assert m, out[-3000:]
    run_id = m.group(1)
    assert run_id.startswith("lis_")  # slurm-jobname-prefix
    jobs = sacct(slurm["env"], run_id)
    assert {j["Comment"] for j in jobs} == JOBS, jobs
    assert len(jobs) == len(JOBS) and {j["State"] for j in jobs} == {"COMPLETED"}, jobs
    assert {j["Account"] for j in jobs} == {"lis-alt"} and {j["Partition"] for j in jobs} == {"cpu"}, jobs
    by_rule = {j["Comment"]: j for j in jobs}
    ev = by_rule["rule_eval_sandbox_wildcards_base_math"]
    assert int(ev["AllocCPUS"]) == 16 and mem_mb(ev["ReqMem"]) == 65536, ev   # set-resources: eval_sandbox
    assert int(by_rule["rule_base"]["AllocCPUS"]) == 4                          # set-resources: base
    assert int(by_rule["rule_tasks_wildcards_math"]["AllocCPUS"]) == 2          # default-resources

    # one log per job, named by its Slurm job id, holding what the job printed
    logs = {p.stem: p for p in (repo / "logs/slurm").rglob("*.log")}
    for j in jobs:
        assert j["JobIDRaw"] in logs, (j, sorted(logs))
        assert "Finished jobid" in logs[j["JobIDRaw"]].read_text(), logs[j["JobIDRaw"]]
    ev_log = logs[ev["JobIDRaw"]]
    assert ev_log.parent == repo / "logs/slurm/rule_eval_sandbox/base_math"
    assert "lis.eval: base/math/sandbox: accuracy" in ev_log.read_text()

    # shown in the CI log (make test-cluster runs pytest -s): what Slurm recorded, and the eval job's log
    print("\n" + run(["sacct", "-X", "--starttime", "now-1days", "--name", run_id, "-o",
                      "JobID,Partition,Account,AllocCPUS,ReqMem,State,Elapsed,Comment%40"], env=slurm["env"]).stdout)
    print("\n".join(ev_log.read_text().splitlines()[-12:]))

    # nothing changed: a second run submits nothing
    r, out = snakemake(repo, TARGET, env=env)
    assert "Nothing to be done" in out and "has been submitted with SLURM jobid" not in out, out[-2000:]

    # an account the cluster does not know is refused at submission, naming it
    r, out = snakemake(repo, "--forcerun", "tasks", "data/tasks/math.jsonl", env={**slurm["env"], "LIS_SLURM_ACCOUNT": "nosuch"},
                       check=False)
    assert r.returncode != 0 and "nosuch appears to be invalid" in out, out[-2000:]


def test_down_leaves_nothing_behind(slurm):
    pids = daemon_pids()
    assert set(pids) == {"munged", "mariadbd", "slurmdbd", "slurmctld", "slurmd"}
    t0 = time.monotonic()
    cluster("down")
    TIMINGS["down"] = time.monotonic() - t0
    assert [name for name, pid in pids.items() if alive(pid)] == []
    assert not DIR.exists() and not os.path.lexists("/run/slurm/conf")
    assert cluster("status", check=False).returncode == 3
    print("\ncluster test timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in TIMINGS.items()))

"""Tables 10 and 11 from hand-made trajectories with known usage and timings; `lis efficiency tokens`
on real files, and its one-line errors for missing or unreadable inputs."""
from __future__ import annotations

import json

import numpy as np
import pytest

from lis.analysis.efficiency_stats import Clustered, percentile_ci, rng_for, t_interval
from lis.analysis.efficiency_tables import efficiency_report, load_episodes
from tests.conftest import lis


def traj(task, mode, domain, usage, wall=10.0, exec_s=(), termination="submitted", repeat=0, model="m"):
    """A trajectory record: ``usage`` = [(prompt, completion)] per call; tool time ``exec_s`` on call 1."""
    steps = [{"prompt_tokens": p, "completion_tokens": c, "cached_tokens": 0, "llm_latency_s": 1.0,
              "calls": [{"exec_time_s": t, "observation_chars": 10} for t in (exec_s if i == 0 else ())]}
             for i, (p, c) in enumerate(usage)]
    return {"task_id": task, "model": model, "domain": domain, "mode": mode, "repeat": repeat,
            "termination": termination, "wall_s": wall, "sandbox_start_s": 0.2, "steps": steps}


def write(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def files(tmp_path):
    """Two domains, both modes; totals (p_K + c_K) chosen so that every number is known by hand."""
    ev = tmp_path / "eval"
    out = {
        ("math", "vanilla"): [traj("a", "vanilla", "math", [(900, 100)], wall=5.0),       # total 1000
                              traj("b", "vanilla", "math", [(1000, 200)], wall=5.0),      # total 1200
                              traj("c", "vanilla", "math", [(800, 100)], wall=5.0)],      # total 900
        ("math", "sandbox"): [traj("a", "sandbox", "math", [(300, 50), (450, 50)], exec_s=(1.0,)),   # env 100, total 500
                              traj("b", "sandbox", "math", [(300, 100), (700, 100)], exec_s=(2.0,)),  # env 300, total 800
                              traj("c", "sandbox", "math", [(300, 20), (420, 80)], exec_s=(0.5,)),    # env 100, total 500
                              traj("c", "sandbox", "math", [(300, 20)], termination="model_error"),   # infra: out
                              traj("d", "sandbox", "math", [(None, None)], exec_s=(1.0,))],           # no usage
        ("physics", "vanilla"): [traj("p", "vanilla", "physics", [(400, 100)]),           # total 500
                                 traj("q", "vanilla", "physics", [(500, 100)])],          # total 600
        ("physics", "sandbox"): [traj("p", "sandbox", "physics", [(200, 50), (300, 50)], exec_s=(1.0,)),  # env 50, total 350
                                 traj("q", "sandbox", "physics", [(200, 50), (350, 50)], exec_s=(3.0,))],  # env 100, total 400
    }
    return [write(ev / "m" / d / mode / "trajectories.jsonl", recs) for (d, mode), recs in out.items()]


def test_groups_and_tables_from_known_records(files):
    inputs, episodes = load_episodes(files)
    assert [i["records"] for i in inputs] == [3, 5, 2, 2] and all(len(i["sha256"]) == 64 for i in inputs)
    rep = efficiency_report(episodes, inputs, b=500)
    g = {(x["domain"], x["mode"]): x for x in rep["groups"]}
    ms = g[("math", "sandbox")]
    assert ms["episodes"] == 5 and ms["excluded"] == {"infra_error": 1, "usage_missing": 1, "no_model_call": 0,
                                                       "no_wall_time": 0}
    tok = ms["tokens"]
    assert tok["total"]["mean"] == pytest.approx(600.0) and tok["total"]["n"] == 3 and tok["total"]["tasks"] == 3
    assert tok["env"]["mean"] == pytest.approx(500 / 3, abs=0.1) and tok["prompt"]["mean"] == 300
    assert tok["model"]["mean"] == pytest.approx((100 + 200 + 100) / 3, abs=0.1)
    lo, hi = tok["total"]["ci95"]
    assert 500 <= lo <= 600 <= hi <= 800
    assert ms["env_token_share"]["value"] == pytest.approx(500 / 1800, abs=1e-4) and ms["env_token_share"]["n"] == 3
    # time counts the episode without usage too: 4 episodes, tool time 1 + 2 + 0.5 + 1 of 40 s
    assert ms["env_time_share"]["value"] == pytest.approx(4.5 / 40, abs=1e-4) and ms["env_time_share"]["n"] == 4
    assert ms["llm_time_share"]["value"] == pytest.approx((2 + 2 + 2 + 1) / 40, abs=1e-4)
    assert ms["terminations"] == {"model_error": 1, "submitted": 4}

    t10 = {(r["model"], r["domain"]): r for r in rep["table10"]}
    math = t10[("m", "math")]
    assert math["vanilla"]["total"]["mean"] == pytest.approx(3100 / 3, abs=0.1) and math["vanilla"]["total"]["n"] == 3
    assert math["sandbox"]["total"]["mean"] == pytest.approx(600.0)
    assert math["ratio"]["value"] == pytest.approx(600 / (3100 / 3), abs=1e-4)
    assert math["ratio"]["ci95"][0] <= math["ratio"]["value"] <= math["ratio"]["ci95"][1]
    every = t10[("m", "all")]  # each domain weighs equally
    assert every["domains"] == ["math", "physics"]
    assert every["vanilla"]["total"]["mean"] == pytest.approx((3100 / 3 + 550) / 2, abs=0.1)
    assert every["sandbox"]["total"]["mean"] == pytest.approx((600 + 375) / 2, abs=0.1)
    assert every["ratio"]["value"] == pytest.approx(487.5 / ((3100 / 3 + 550) / 2), abs=1e-4)
    assert every["vanilla"]["total"]["n"] == 5 and every["sandbox"]["total"]["n"] == 5

    t11 = {(r["model"], r["domain"]): r for r in rep["table11"]}
    assert t11[("m", "physics")]["env_token_share"]["value"] == pytest.approx(150 / 750, abs=1e-4)
    assert t11[("m", "physics")]["env_time_share"]["value"] == pytest.approx(4 / 20, abs=1e-4)
    assert t11[("m", "all")]["env_token_share"]["value"] == pytest.approx((500 / 1800 + 150 / 750) / 2, abs=1e-4)
    assert t11[("m", "all")]["env_token_share"]["n"] == 5


def test_the_bootstrap_keeps_a_tasks_episodes_together():
    c = Clustered()
    for x in (10, 12, 14, 16):        # task a: four repeats
        c.add("a", v=x)
    c.add("b", v=100)
    assert c.n == 5 and c.clusters == 2 and c.mean("v") == pytest.approx(152 / 5)
    reps = c.boot_ratio("v", "_n", rng_for("t"), 4000)
    # every replicate draws whole tasks: a and a (13), b and b (100) or one of each (152/5)
    assert set(np.round(reps, 6)) <= {13.0, 100.0, round(152 / 5, 6)}
    one = Clustered()
    one.add("a", v=1)
    one.add("a", v=3)
    assert one.boot_ratio("v", "_n", rng_for("t")) is None and percentile_ci(None) is None  # one task: no interval


def test_t_interval_on_known_values():
    s = t_interval([1.0, 2.0, 3.0])
    assert s["mean"] == 2.0 and s["std"] == 1.0 and s["n"] == 3
    assert s["ci95"] == pytest.approx([2 - 4.303 / 3 ** 0.5, 2 + 4.303 / 3 ** 0.5], rel=1e-3)  # t.ppf 4.3027; the old table 4.303
    assert t_interval([5.0])["ci95"] is None and t_interval([])["n"] == 0


def test_cli_reads_exactly_the_given_files(files, tmp_path):
    out = tmp_path / "eff.json"
    csv = tmp_path / "episodes.csv"
    r = lis(["lis", "efficiency", "tokens", *map(str, files[:2]), "--out", str(out), "--episodes-csv", str(csv)])
    rep = json.loads(out.read_text())
    assert [i["path"] for i in rep["inputs"]] == [f.as_posix() for f in files[:2]]
    assert {(g["domain"], g["mode"]) for g in rep["groups"]} == {("math", "vanilla"), ("math", "sandbox")}
    assert "m " in r.stdout and "math" in r.stdout
    assert len(csv.read_text().splitlines()) == 1 + 8


def test_missing_or_unreadable_inputs_are_one_line_errors(files, tmp_path):
    missing = tmp_path / "eval/m/chem/sandbox/trajectories.jsonl"
    r = lis(["lis", "efficiency", "tokens", str(files[0]), str(missing), "--out", str(tmp_path / "x.json")], check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and str(missing) in r.stderr and "does not exist" in r.stderr
    bad = write(tmp_path / "bad.jsonl", [traj("a", "vanilla", "math", [(1, 1)])])
    bad.write_text(bad.read_text() + "{not json\n")
    r = lis(["lis", "efficiency", "tokens", str(bad), "--out", str(tmp_path / "x.json")], check=False)
    assert r.returncode == 2 and f"{bad} line 2" in r.stderr and "Traceback" not in r.stderr
    r = lis(["lis", "efficiency", "tokens", str(tmp_path), "--out", str(tmp_path / "x.json")], check=False)
    assert r.returncode == 2 and f"{tmp_path}/trajectories.jsonl does not exist" in r.stderr  # a folder: its job's file
    r = lis(["lis", "efficiency", "tokens", "/dev/null", "--out", str(tmp_path / "x.json")], check=False)
    assert r.returncode == 2 and "/dev/null is not a file" in r.stderr
    r = lis(["lis", "efficiency", "tokens", "--out", str(tmp_path / "x.json")], check=False)
    assert r.returncode == 2 and "no trajectories given" in r.stderr
    assert not (tmp_path / "x.json").exists()

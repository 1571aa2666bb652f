"""Memory of a sandbox, idle and busy, read from its real cgroup (Docker and bubblewrap), and Table 12
built from the real measurement and the real image manifest."""
from __future__ import annotations

import dataclasses
import json
import uuid

import pytest

from lis.bench.memory import measure_memory
from tests.conftest import ROOT, run

pytestmark = [pytest.mark.docker, pytest.mark.slow]
EXPECTED_OUTPUT = "1000.0 1.772454 2.094551"  # the busy workload really ran: its results


def containers_of(docker_client, run_id):
    return docker_client.containers.list(all=True, sparse=True, filters={"label": f"lis.run={run_id}"})


def check(res, backend):
    assert res["backend"] == backend and res["n"] == 1 and res["source"].startswith("cgroup v")
    assert res["workload"]["output"].startswith(EXPECTED_OUTPUT)
    idle, peak = res["idle_mib"]["mean"], res["busy_peak_mib"]["mean"]
    hwm, after = res["busy_cgroup_peak_mib"]["mean"], res["busy_after_mib"]["mean"]
    assert 0 < idle < 64, res
    # numpy, scipy, sympy and pandas in memory: far above idle, far below the limit
    assert idle + 60 < peak < res["memory_limit_mib"], res
    assert hwm >= peak - 1, res          # the high-water mark is over usage, which bounds the working set
    assert after < peak, res
    assert min(res["samples_per_run"]) > 10 and res["idle_mib"]["n"] == 1 and res["idle_mib"]["ci95"] is None


def test_lis_bench_memory_docker_and_table12(tmp_path, image_tag, docker_client):
    run_id = f"pytest-mem-{uuid.uuid4().hex[:6]}"
    mem = tmp_path / "bench/sandbox_memory.json"
    manifest = tmp_path / "image/manifest.json"
    run(["lis", "image", "build", "--profile", "ci", "--out", str(manifest)])
    run(["lis", "bench", "memory", "--profile", "ci", "--n", "1", "--settle", "1", "--image-manifest", str(manifest),
         "--out", str(mem)], env={"LIS_RUN_ID": run_id})
    res = json.loads(mem.read_text())
    check(res, "docker")
    assert res["image"] == json.loads(manifest.read_text())["image"]["tag"]
    assert not containers_of(docker_client, f"bench-{run_id}")  # nothing left behind

    out = tmp_path / "analysis/storage.json"
    r = run(["lis", "efficiency", "storage", "--image-manifest", str(manifest), "--memory", str(mem), "--out", str(out)])
    table = json.loads(out.read_text())
    rows = {row["name"]: row for row in table["images"]}
    assert rows["SWE-Gym"]["size_gb"] == 6000 and rows["SWE-Gym"]["origin"] == "quoted"
    ours = rows["lis (this reproduction)"]
    size = json.loads(manifest.read_text())["image"]["size_bytes"]
    assert ours["origin"] == "measured" and ours["size_gb"] == pytest.approx(size / 1e9, abs=1e-3)
    assert ours["ratio_to_paper_image"] == pytest.approx(size / 1e9 / 1.1, abs=1e-3)
    peak = table["memory"]["busy_peak"]
    assert peak["mib"] == res["busy_peak_mib"]["mean"] and peak["n"] == 1 and peak["paper_mb"] == 200
    assert peak["mb"] == pytest.approx(res["busy_peak_mib"]["mean"] * 1.048576, abs=0.1)
    c512 = next(c for c in table["concurrency"] if c["sandboxes"] == 512)
    assert c512["ours_total_gb"] == pytest.approx(512 * peak["mb"] / 1000, abs=0.1) and c512["paper_total_gb"] == 100
    assert "SWE-bench" in r.stdout and "busy_peak" in r.stdout


def test_bwrap_memory_from_its_own_cgroup(base_config):
    res = measure_memory(dataclasses.replace(base_config, backend="bwrap"), n=1, settle_s=1.0)
    check(res, "bwrap")


def test_storage_inputs_missing_or_unreadable_are_one_line_errors(tmp_path):
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"image": {"size_bytes": 578_000_000, "tag": "x"}}))
    mem = tmp_path / "mem.json"
    args = ["lis", "efficiency", "storage", "--image-manifest", str(manifest), "--out", str(tmp_path / "s.json")]
    r = run([*args, "--memory", str(mem)], check=False)
    assert r.returncode == 2 and f"sandbox memory measurement {mem} does not exist" in r.stderr
    assert "lis bench memory" in r.stderr and "Traceback" not in r.stderr
    mem.write_text("{\"idle_mib\": ")
    r = run([*args, "--memory", str(mem)], check=False)
    assert r.returncode == 2 and f"cannot read sandbox memory measurement {mem}" in r.stderr
    mem.write_text(json.dumps({"idle_mib": {"mean": 12.0, "ci95": None, "n": 1}}))
    r = run([*args, "--memory", str(mem)], check=False)
    assert r.returncode == 2 and "has no busy_peak_mib" in r.stderr
    r = run([*args, "--memory", str(mem), "--quoted", str(tmp_path / "nope.yaml")], check=False)
    assert r.returncode == 2 and "quoted storage numbers" in r.stderr and "nope.yaml" in r.stderr
    assert not (tmp_path / "s.json").exists()


def test_the_quoted_numbers_are_the_papers():
    import yaml

    q = yaml.safe_load((ROOT / "data/reference/storage_quoted.yaml").read_text())
    sizes = {i["name"]: i["size_gb"] for i in q["images"]}
    assert sizes == {"LLM-in-Sandbox": 1.1, "SWE-Gym": 6000, "SWE-smith": 295, "SWE-bench": 257}
    assert (q["memory"]["idle_mb"], q["memory"]["peak_mb"]) == (50, 200)
    assert all(s in q["sources"] for i in q["images"] for s in i["sources"])
    assert "storage_quoted.yaml" in (ROOT / "data/reference/PROVENANCE.md").read_text()

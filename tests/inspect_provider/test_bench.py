"""``lis bench inspect``: one run through the lis provider and Inspect's local sandbox, ratios
printed (Inspect's docker sandbox only where `docker compose` v2 exists)."""
from __future__ import annotations

import json

import pytest

from tests.conftest import run
from tests.inspect_provider.conftest import inspect_containers

pytestmark = [pytest.mark.docker]


@pytest.mark.parametrize("backend", ["docker", "bwrap"])
def test_bench_inspect_prints_both_providers_and_ratios(backend, tmp_path):
    out = tmp_path / "bench.json"
    r = run(["lis", "bench", "inspect", "--backend", backend, "--samples", "1", "--calls", "3", "--no-docker",
             "--out", str(out)], timeout=300)
    d = json.loads(r.stdout)
    assert d == json.loads(out.read_text())
    assert d["lis_backend"] == backend and d["docker"] == "skipped: --no-docker"
    for name in ("lis", "local"):
        p = d["providers"][name]
        assert p["sample_init"]["n"] == 1 and p["exec_true"]["n"] == 3 and p["exec_cat_1kib"]["median_ms"] > 0
    assert set(d["ratios"]["lis_over_local"]) == {"sample_init", "exec_true", "exec_cat_1kib"}
    assert inspect_containers() == []


def test_bench_inspect_refuses_an_unknown_backend_in_one_line():
    r = run(["lis", "bench", "inspect", "--backend", "podman"], check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "not docker or bwrap" in r.stderr, r.stderr

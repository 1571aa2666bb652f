"""`lis bench serve` at small scale: every request answered with its own answer, no sandbox left."""
from __future__ import annotations

import json

import pytest

from tests.conftest import run

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_bench_serve_loses_no_episode(tmp_path, image_tag):
    out = tmp_path / "bench.json"
    r = run(["lis", "bench", "serve", "--profile", "ci", "--requests", "6", "--concurrent", "3",
             "--max-concurrent", "2", "--sequential", "1", "--no-baseline", "--out", str(out)], timeout=600)
    res = json.loads(out.read_text())
    assert json.loads(r.stdout) == res
    assert res["load"]["answered"] == 6 and res["load"]["errors"] == 0 and res["lost_episodes"] == 0
    assert res["sandboxes_left"] == {"after_load": 0, "after_sigterm": 0}
    assert res["server"]["counts"]["submitted"] == 7  # 1 sequential + 6 under load (one queued at least)
    assert 0 < res["load"]["p50_s"] <= res["load"]["p90_s"] <= res["load"]["p99_s"]
    assert res["load"]["throughput_rps"] > 0

"""`lis bench sandbox`: p99 beside p50 and p90, and numbers it cannot measure refused in one line
(exit 2) before any sandbox starts: `--n-echo -5` used to end in a StatisticsError traceback."""
from __future__ import annotations

import json

import pytest

from tests.conftest import run

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("args", [["--n-echo", "-5"], ["--n-echo", "0"], ["--concurrent", "0"],
                                  ["--commands", "-1"], ["--warm", "0"], ["--memory-n", "-1"]])
def test_bad_numbers_are_refused_in_one_line(args):
    r = run(["lis", "bench", "sandbox", *args], check=False, timeout=120)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and args[0] in lines[0], r.stderr
    assert "Traceback" not in r.stderr and "StatisticsError" not in r.stderr and r.stdout == ""


def test_timings_have_p50_p90_and_p99(tmp_path):
    out = tmp_path / "bench.json"
    run(["lis", "bench", "sandbox", "--n-echo", "20", "--concurrent", "2", "--commands", "2", "--warm", "1",
         "--memory-n", "0", "--out", str(out)], timeout=300)
    res = json.loads(out.read_text())
    for key in ("execute_bash_echo", "session_exec_echo", "raw_exec_run_echo", "start", "acquire_warm"):
        t = res[key]
        assert t["n"] >= 2 and 0 < t["median_ms"] <= t["p90_ms"] <= t["p99_ms"], (key, t)
    assert res["execute_bash_echo"]["n"] == 20 and res["concurrent"]["errors"] == 0

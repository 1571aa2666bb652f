"""`lis bench generate` on the tiny model: the real command, one JSON object, the same draws both ways."""
from __future__ import annotations

import json

from tests.conftest import BIN, ROOT, lis, run


def test_bench_generate_prints_one_json_object(tiny_dir, tmp_path):
    out = tmp_path / "bench.json"
    r = run([str(BIN / "lis"), "bench", "generate", "--model", str(tiny_dir), "--n", "4",
             "--max-new-tokens", "8", "--threads", "1", "--group", "--out", str(out)], cwd=ROOT)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res == json.loads(out.read_text())
    assert res["n"] == 4 and res["max_new_tokens"] == 8 and res["same_prompt"] is True
    assert res["sequential"]["tokens"] == res["concurrent"]["tokens"] == 32
    assert res["identical_sequences"] == 4 and res["errors"] == []
    assert res["concurrent"]["prefills"] + res["concurrent"]["shared_prefills"] == 4
    assert res["speedup"] > 0 and res["concurrent"]["max_batch"] >= 2


def test_bench_generate_without_a_model_is_one_line(tmp_path):
    r = lis(["bench", "generate", "--model", str(tmp_path / "none")], check=False)
    assert r.returncode == 2 and "no model folder" in r.stderr and "Traceback" not in r.stderr

"""`lis context-tasks` (train split, three variants, manifest) and `lis tasks --source generated` (held-out)."""
from __future__ import annotations

import json

from tests.conftest import lis


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_context_tasks_writes_the_variants_and_the_held_out_split(tmp_path):
    out = tmp_path / "context"
    r = lis(["lis", "context-tasks", "--profile", "ci", "--out-dir", str(out), "--log", str(tmp_path / "ctx.log")])
    assert "wrote files 36, prompt 36, math 12 tasks" in r.stdout
    files, prompt, math = (read(out / f"{v}.jsonl") for v in ("files", "prompt", "math"))
    assert [t["id"] for t in files] == [t["id"] for t in prompt]
    assert all(t["meta"]["mode"] == "sandbox_inline" and t["input_files"] for t in prompt)
    assert all(t["domain"] == "math" and not t["input_files"] and t["qa_type"] == "free-form" for t in math)
    assert {t["meta"]["split"] for t in files + prompt} == {"train"}
    m = json.loads((out / "manifest.json").read_text())
    assert m["stage"] == "context_tasks" and m["profile"] == "ci" and m["source"] == "generated" and m["seed"] == 0
    assert m["variants"]["files"]["count"] == 36 and m["variants"]["math"]["qa_types"] == {"free-form": 12}
    assert sum(m["variants"]["files"]["qa_mix"].values()) == 36 and m["knobs"]["contexts"] == 16
    assert m["held_out"]["contexts"] == 4 and len(m["content_sha256"]) == 64
    assert (tmp_path / "ctx.log").read_text()

    again = tmp_path / "again"
    lis(["lis", "context-tasks", "--profile", "ci", "--out-dir", str(again)])
    assert json.loads((again / "manifest.json").read_text())["content_sha256"] == m["content_sha256"]

    held_path = tmp_path / "tasks/instruct_pretrain.jsonl"
    lis(["lis", "tasks", "--domain", "instruct_pretrain", "--profile", "ci", "--out", str(held_path)])
    held = read(held_path)
    assert len(held) == 12 and {t["meta"]["split"] for t in held} == {"held_out"}
    assert not {t["meta"]["context_id"] for t in held} & {t["meta"]["context_id"] for t in files}
    hm = json.loads((tmp_path / "tasks/instruct_pretrain.manifest.json").read_text())
    assert hm["source"] == "generated" and hm["split"] == "held_out" and hm["contexts"] == {"train": 12, "held_out": 4}


def test_generated_source_is_for_instruct_pretrain_only(tmp_path):
    r = lis(["lis", "tasks", "--domain", "math", "--source", "generated", "--profile", "ci", "--out",
             str(tmp_path / "m.jsonl")], check=False)
    assert r.returncode == 2 and "applies to instruct_pretrain only" in r.stderr and r.stderr.count("\n") == 1
    r = lis(["lis", "tasks", "--domain", "instruct_pretrain", "--source", "generated", "--revision", "abc",
             "--profile", "ci", "--out", str(tmp_path / "m.jsonl")], check=False)
    assert r.returncode == 2 and "--revision does not apply to --source generated" in r.stderr


def test_help():
    out = lis(["lis", "context-tasks", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--profile" in out and "--log" in out and "--out" in out and "tasks.context" in out

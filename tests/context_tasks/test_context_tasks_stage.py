"""The ``context_tasks`` stage (lis/stages/context_tasks.py): its command writes what its ``run`` writes,
from the settings its ``resolve`` makes of the params; the declaration is what dvc.yaml and the Snakemake
rule use."""
from __future__ import annotations

import json

from lis.context_tasks import settings_from, VARIANTS
from lis.params import load
from lis.stages import context_tasks as stage
from lis.stages import registry
from tests.conftest import ROOT, lis

PARAMS = ROOT / "params.yaml"


def _without_time(manifest: dict) -> dict:
    return {k: v for k, v in manifest.items() if k not in ("wall_s", "finished_utc")}


def test_the_command_runs_the_stage(tmp_path):
    """On the ci profile: the command's three variants are byte for byte the ones ``run`` writes from
    the settings ``resolve`` makes of the same params, and its manifest is ``run``'s but for the time."""
    out = tmp_path / "cmd"
    r = lis(["lis", "context-tasks", "--profile", "ci", "--out-dir", str(out)])
    settings = stage.resolve(load(params_file=PARAMS, profile="ci"))
    section = load(ROOT, profile="ci").data["tasks"]["context"]  # as written in the files
    assert settings == stage.Settings(context=settings_from(section), section=section, root=ROOT, profile="ci")
    again = tmp_path / "run"
    outputs = stage.outputs_in(again)
    assert outputs == {"files": again / "files.jsonl", "prompt": again / "prompt.jsonl", "math": again / "math.jsonl",
                       "manifest": again / "manifest.json"}
    manifest = stage.run(settings, {}, outputs)
    for name in VARIANTS:
        assert outputs[name].read_bytes() == (out / f"{name}.jsonl").read_bytes()
    written = json.loads((out / "manifest.json").read_text())
    assert _without_time(written) == _without_time(json.loads(json.dumps(manifest)))
    assert _without_time(json.loads(outputs["manifest"].read_text())) == _without_time(written)
    counts = ", ".join(f"{k} {v['count']}" for k, v in manifest["variants"].items())  # run's order (the file's is sorted)
    assert r.stdout == f"wrote {counts} tasks to {out}\n" and written["profile"] == "ci"


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("context_tasks") == stage.STAGE
    assert stage.STAGE.outs == tuple(f"data/train/context/{name}" for name in
                                     ("files.jsonl", "prompt.jsonl", "math.jsonl", "manifest.json"))

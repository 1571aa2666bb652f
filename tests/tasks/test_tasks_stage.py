"""The ``tasks`` stage (lis/stages/tasks.py): its command writes what its ``run`` writes, from the
settings its ``resolve`` makes of the flags and params; the declaration is what dvc.yaml and the
Snakemake rule are rendered from."""
from __future__ import annotations

import json

import pytest

from lis.errors import LisError
from lis.params import load
from lis.stages import registry
from lis.stages import tasks as stage
from tests.conftest import ROOT, lis

SAMPLES = ROOT / "data" / "samples"


def _without_time(manifest: dict) -> dict:
    return {k: v for k, v in manifest.items() if k != "wall_s"}


@pytest.mark.parametrize("options, settings", [
    ({"domain": "math", "limit": 3, "seed": 5, "samples_dir": SAMPLES},
     stage.Settings(domain="math", limit=3, seed=5, samples_dir=SAMPLES)),
    ({"domain": "instruct_pretrain", "source": "generated", "limit": 4},
     stage.Settings(domain="instruct_pretrain", source="generated", limit=4)),
])
def test_the_command_runs_the_stage(tmp_path, monkeypatch, options, settings):
    """Outside a project (no params): the command's files are byte for byte the ones ``run`` writes
    from the settings ``resolve`` makes of the same flags, and its manifest is ``run``'s but for the
    wall time."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "cmd" / "set.jsonl"
    flags = [word for key, value in options.items() for word in (f"--{key.replace('_', '-')}", str(value))]
    lis(["lis", "tasks", *flags, "--out", str(out)], cwd=tmp_path)
    assert stage.resolve(None, **options) == settings
    again = tmp_path / "run" / "set.jsonl"
    manifest = stage.run(settings, {}, {"tasks": again, "manifest": stage.manifest_path(again)})
    assert again.read_bytes() == out.read_bytes()
    written = json.loads(stage.manifest_path(out).read_text())
    assert _without_time(written) == _without_time(json.loads(json.dumps(manifest)))
    assert _without_time(json.loads(stage.manifest_path(again).read_text())) == _without_time(written)
    assert written["count"] == settings.limit and written["source"] == settings.source


SMOKE = load(ROOT, profile="smoke")


def test_a_flag_wins_over_params_and_the_params_fill_the_rest():
    """In the project, on the smoke profile: math is the 3-item sample draw of params; a flag replaces
    one setting and leaves the others to params."""
    settings = stage.resolve(SMOKE, "math")
    assert (settings.source, settings.limit, settings.seed) == ("samples", 3, 0)
    assert settings.samples_dir == ROOT / "data" / "samples"
    settings = stage.resolve(SMOKE, "math", limit=2)
    assert (settings.limit, settings.seed) == (2, 0)
    settings = stage.resolve(SMOKE, "instruct_pretrain")
    assert settings.source == "generated" and settings.context["source"] == "generated" and settings.samples_dir is None
    with pytest.raises(LisError, match="--revision applies to --source hub only"):
        stage.resolve(SMOKE, "math", revision="abc")
    with pytest.raises(LisError, match="--source generated applies to instruct_pretrain only, not math"):
        stage.Settings(domain="math", source="generated")


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("tasks") == stage.STAGE
    assert stage.STAGE.outs == ("data/tasks/${item}.jsonl", "data/tasks/${item}.manifest.json")

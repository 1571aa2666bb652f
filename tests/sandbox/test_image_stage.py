"""The ``image`` stage (lis/stages/image.py): its command writes the manifest its ``run`` writes, from
the settings its ``resolve`` makes of the flag and the params; the declaration is what dvc.yaml and the
Snakemake rule are rendered from. On the real engine, with the image present (``image_tag``): both reuse it. The build
itself (and ``--force``) is tests/sandbox/test_image.py."""
from __future__ import annotations

import json

import pytest

from lis.params import load
from lis.stages import image as stage
from lis.stages import registry
from tests.conftest import ROOT, lis

PARAMS = ROOT / "params.yaml"


def _without_time(manifest: dict) -> dict:
    return {k: v for k, v in manifest.items() if k not in ("wall_s", "finished_utc")}


@pytest.mark.docker
def test_the_command_runs_the_stage(tmp_path, image_tag):
    out = tmp_path / "cmd" / "manifest.json"
    lis(["lis", "image", "build", "--out", str(out)])
    p = load(ROOT)
    settings = stage.resolve(load(params_file=PARAMS), force=False)
    assert settings == stage.Settings(section=p.settings("image").written(), root=ROOT, profile=p.profile,
                                      params_hash=p.section_hash("image"), force=False)
    again = tmp_path / "run" / "manifest.json"
    manifest = stage.run(settings, {}, {"out": again})
    written = json.loads(out.read_text())
    assert _without_time(written) == _without_time(json.loads(json.dumps(manifest)))
    assert _without_time(json.loads(again.read_text())) == _without_time(written)
    assert written["image"]["tag"] == image_tag and written["image"]["action"] == "reused"
    assert written["stage"] == "image"


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("image") == stage.STAGE
    assert stage.STAGE.outs == ("data/image/manifest.json",)

"""The ``storage`` stage (lis/stages/storage.py): its command writes what its ``run`` computes, to the
path its declaration names; the declaration is what dvc.yaml and the Snakemake rule are rendered from."""
from __future__ import annotations

import json
import shutil

from lis.analysis.efficiency_storage import storage_report
from lis.stages import registry
from lis.stages import storage as stage
from tests.conftest import ROOT, lis
from tests.report.build_inputs import write_image_and_storage


def test_the_command_runs_the_stage(tmp_path):
    (tmp_path / "data" / "reference").mkdir(parents=True)
    (tmp_path / "data" / "analysis").mkdir(parents=True)
    shutil.copy(ROOT / "data" / "reference" / "storage_quoted.yaml", tmp_path / "data" / "reference")
    write_image_and_storage(tmp_path)
    out = tmp_path / "storage.json"
    inputs = {"quoted": tmp_path / "data/reference/storage_quoted.yaml",
              "image_manifest": tmp_path / "data/image/manifest.json", "memory": tmp_path / "data/bench/sandbox_memory.json"}
    r = lis(["lis", "efficiency", "storage", "--quoted", str(inputs["quoted"]), "--image-manifest",
             str(inputs["image_manifest"]), "--memory", str(inputs["memory"]), "--out", str(out)])
    assert "memory idle" in r.stdout
    expected = storage_report(*inputs.values())
    assert json.loads(out.read_text()) == json.loads(json.dumps(expected, default=str))
    again = tmp_path / "again.json"
    assert stage.run(None, inputs, {"out": again}) == expected
    assert again.read_bytes() == out.read_bytes()


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("storage") == stage.STAGE
    assert stage.STAGE.outs == ("data/analysis/storage.json",)

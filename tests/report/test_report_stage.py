"""The ``report`` stage (lis/stages/report.py): its command writes what its ``run`` writes, from the
profile's params; the declaration is what dvc.yaml and the Snakemake rule
use. One external model on math and long context (the inputs made by the real producers:
tests/report/build_inputs.py), the trajectory viewer off."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lis.errors import LisError
from lis.params import load
from lis.stages import registry
from lis.stages import report as stage
from lis.pipeline.code_deps import stage_code
from tests.conftest import lis
from tests.report.build_inputs import build_all, make_project

JOBS = {"models": ["ext"], "external": ["ext"], "domains": ["math", "long_context"], "long_context_ablation": ["ext"],
        "grpo_data": []}
EXT = {"backend": "local", "path": "data/models/ext", "sampling": {"temperature": 0.7, "top_p": 0.8, "top_k": 20,
                                                                 "max_tokens": 192}}
INPUTS = {"image_manifest": Path("data/image/manifest.json"), "eval_root": Path("data/eval")}


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _untimed(index: dict) -> dict:
    return {k: v for k, v in index.items() if k != "report_s"}


def test_the_command_runs_the_stage(tmp_path):
    """Every table is byte for byte the one ``run`` writes from the
    same params, the index the same but for the report's own time, the same figures; a relative
    ``out`` is under the project root."""
    root = make_project(tmp_path, jobs=JOBS, rl_pairs=[], models={"ext": EXT}, report={"trajectories": False})
    build_all(root)
    lis(["lis", "report", "--params", root / "params.yaml", "--out", "cmd"], cwd=root)
    params = load(params_file=root / "params.yaml")
    assert params.root == root and params.profile == "smoke"
    paths = stage.run(params, INPUTS, {"out": Path("run")})
    written, again = _files(root / "cmd"), _files(root / "run")
    assert sorted(written) == sorted(again) == sorted(p.relative_to(root / "run").as_posix() for p in paths)
    tables = [f for f in written if f.startswith("tables/")]
    assert tables and all(written[f] == again[f] for f in tables)
    assert _untimed(json.loads(written["index.json"])) == _untimed(json.loads(again["index.json"]))


def test_an_input_other_than_the_declared_one_is_refused():
    with pytest.raises(LisError, match="elsewhere/eval is not the report's declared input data/eval"):
        stage.run(None, {**INPUTS, "eval_root": Path("elsewhere/eval")}, {"out": Path("x")})


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("report") == stage.STAGE
    assert "lis/stages/report.py" in stage_code(stage.STAGE.entry) and stage.STAGE.entry == "lis.stages.report:run"

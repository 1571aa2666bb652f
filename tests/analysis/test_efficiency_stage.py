"""The ``efficiency`` stage (lis/stages/efficiency.py): its command writes what its ``run`` computes, to the
paths its declaration names; the declaration is what dvc.yaml and the Snakemake rule are rendered from."""
from __future__ import annotations

import json

from lis.params import load
from lis.stages import efficiency as stage
from lis.stages import registry
from lis.pipeline.code_deps import stage_code
from tests.conftest import lis
from tests.report.build_inputs import make_project, write_job


def test_the_command_runs_the_stage(tmp_path):
    """``lis efficiency tokens --jobs`` on an eval root and ``run`` on the settings ``resolve`` reads from
    the same params and options: the same report, the same bytes in every output."""
    root = make_project(tmp_path, jobs={"models": ["base", "sft"], "domains": ["math", "physics"], "external": [],
                                        "long_context_ablation": [], "grpo_data": [], "replicates": []})
    for m in ("base", "sft"):
        for d in ("math", "physics"):
            write_job(root, m, d, "sandbox", [1.0, 0.0, None])
            write_job(root, m, d, "vanilla", [1.0, 0.0])
    eval_root, params_file = root / "data" / "eval", root / "params.yaml"
    first = {"out": tmp_path / "command" / "efficiency.json", "episodes_csv": tmp_path / "command" / "episodes.csv"}
    r = lis(["lis", "efficiency", "tokens", "--jobs", "--eval-root", str(eval_root), "--params", str(params_file),
             "--replicates", "200", "--out", str(first["out"]), "--episodes-csv", str(first["episodes_csv"])])
    assert "vanilla" in r.stdout and "ratio" in r.stdout
    settings = stage.resolve(load(params_file=params_file), jobs=True, replicates=200)
    assert settings.domains == ("math", "physics") and settings.efficiency.replicates == 200
    again = {"out": tmp_path / "run" / "efficiency.json", "episodes_csv": tmp_path / "run" / "episodes.csv"}
    report = stage.run(settings, {"trajectories": [], "eval_root": eval_root}, again)
    assert len(report["groups"]) == 8
    assert json.loads(first["out"].read_text()) == json.loads(json.dumps(report, default=str))
    for name in ("efficiency.json", "episodes.csv", "episodes.parquet"):
        assert (tmp_path / "run" / name).read_bytes() == (tmp_path / "command" / name).read_bytes(), name


def test_replicates_come_from_the_params_unless_given(tmp_path):
    params = load(params_file=make_project(tmp_path) / "params.yaml")
    assert stage.resolve(params).efficiency == params.settings("efficiency")
    assert stage.resolve(None, replicates=300).efficiency.replicates == 300


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("efficiency") == stage.STAGE
    assert stage.STAGE.entry == "lis.stages.efficiency:run" and "lis/stages/efficiency.py" in stage_code(stage.STAGE.entry)

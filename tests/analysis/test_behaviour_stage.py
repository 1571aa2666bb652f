"""The ``behaviour`` stage (lis/stages/behaviour.py): its command writes what its ``run`` computes, to the
paths its declaration names; the declaration is what dvc.yaml and the Snakemake rule are rendered from."""
from __future__ import annotations

import json

from lis.params import load
from lis.stages import behaviour as stage
from lis.stages import registry
from lis.pipeline.code_deps import stage_code
from tests.conftest import lis
from tests.report.build_inputs import make_project, write_job

OUTS = ("behaviour.json", "csv/groups.csv", "csv/figure2_by_domain.csv", "csv/table4.csv", "csv/table8.csv",
        "csv/table9.csv", "csv/table9_pairs.csv", "turns.jsonl", "turns.parquet")


def _outputs(folder):
    return {"out": folder / "behaviour.json", "csv_dir": folder / "csv", "turns_out": folder / "turns.jsonl"}


def test_the_command_runs_the_stage(tmp_path):
    """``lis behaviour analyse --jobs`` on an eval root and ``run`` on the settings ``resolve`` reads from
    the same params: the same report, the same bytes in every output."""
    root = make_project(tmp_path, jobs={"models": ["sft", "grpo-files"], "domains": ["math"], "external": [],
                                        "long_context_ablation": [], "grpo_data": ["files"], "replicates": []})
    for m in ("sft", "grpo-files"):
        write_job(root, m, "math", "sandbox", [1.0, 0.0, None])
        write_job(root, m, "math", "vanilla", [1.0, 0.0])
    eval_root, params_file = root / "data" / "eval", root / "params.yaml"
    first = _outputs(tmp_path / "command")
    r = lis(["lis", "behaviour", "analyse", "--jobs", "--eval-root", str(eval_root), "--params", str(params_file),
             "--out", str(first["out"]), "--csv-dir", str(first["csv_dir"]), "--turns-out", str(first["turns_out"])])
    assert "grpo-files" in r.stdout and "compute" in r.stdout
    settings = stage.resolve(load(params_file=params_file), jobs=True)
    assert settings.models == ("sft", "grpo-files") and settings.behaviour.modes == ["sandbox", "vanilla"]
    again = _outputs(tmp_path / "run")
    report = stage.run(settings, {"trajectories": [], "eval_root": eval_root}, again)
    assert report["episodes"] == {"total": 10, "included": 8}
    assert json.loads(first["out"].read_text()) == json.loads(json.dumps(report, default=str))
    for name in OUTS:
        assert (tmp_path / "run" / name).read_bytes() == (tmp_path / "command" / name).read_bytes(), name


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("behaviour") == stage.STAGE
    assert stage.STAGE.entry == "lis.stages.behaviour:run" and "lis/stages/behaviour.py" in stage_code(stage.STAGE.entry)

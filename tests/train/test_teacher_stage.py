"""The ``teacher`` stage (lis/stages/teacher.py): its command writes the episodes its ``run`` writes, from the
settings its ``resolve`` makes of the params; the declaration is what dvc.yaml and the Snakemake rule are rendered from.
Eight scripted episodes in real sandboxes (the params' backend)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lis.errors import LisError
from lis.params import load
from lis.stages import registry
from lis.stages import teacher as stage
from lis.tasks import load_samples
from tests.conftest import lis, one_line_error, params_project

pytestmark = [pytest.mark.docker, pytest.mark.training]  # tests/train: the training tier (tests/test_markers.py)



def _untimed(obj):
    """``obj`` without the fields a clock wrote (durations ``*_s``, times ``*_utc``)."""
    if isinstance(obj, dict):
        return {k: _untimed(v) for k, v in obj.items() if not k.endswith(("_s", "_utc"))}
    if isinstance(obj, list):
        return [_untimed(v) for v in obj]
    return obj


def _episodes(folder: Path) -> list[dict]:
    return [_untimed(json.loads(line)) for line in (folder / "trajectories.jsonl").read_text().splitlines()]


def test_the_command_writes_the_episodes_run_writes(tmp_path, image_tag):
    root = params_project(tmp_path, "teacher", {"benchmark_episodes": 8, "context_episodes": 0, "vanilla_context_episodes": 0,
                               "workers": 2, "seed": 5})
    manifest = tmp_path / "image.json"
    manifest.write_text(json.dumps({"image": {"tag": image_tag}}))
    missing = tmp_path / "no-context-tasks.jsonl"  # none asked for: not needed
    lis(["lis", "train", "teacher", "--params", root / "params.yaml", "--context-tasks", missing,
         "--image-manifest", manifest, "--out", tmp_path / "cmd"])
    settings = stage.resolve(load(root))
    assert settings.teacher.benchmark_episodes == 8 and settings.teacher.model == "scripted"
    written = stage.run(settings, {"context_tasks": missing, "image_manifest": manifest}, {"out": tmp_path / "run"})
    assert written["episodes"] == 8 and written["by_source"]["benchmark"]["episodes"] == 8
    assert _episodes(tmp_path / "cmd") == _episodes(tmp_path / "run")
    assert [d["teacher"]["index"] for d in _episodes(tmp_path / "run")] == list(range(8))
    on_disk = json.loads((tmp_path / "cmd" / "manifest.json").read_text())
    assert _untimed(on_disk) == _untimed(written)


def test_a_teacher_model_that_is_no_models_entry_is_one_line(tmp_path):
    root = params_project(tmp_path, "teacher", {"model": "nobody"})
    with pytest.raises(LisError, match="teacher.model 'nobody' is not a models entry"):
        stage.resolve(load(root))
    r = lis(["lis", "train", "teacher", "--params", root / "params.yaml", "--out", tmp_path / "out"], check=False)
    one_line_error(r, "teacher.model 'nobody' is not a models entry", "name an entry of models")


def test_context_episodes_without_context_tasks_name_the_stage_to_run(tmp_path, image_tag):
    root = params_project(tmp_path, "teacher", {"context_episodes": 2})
    manifest = tmp_path / "image.json"
    manifest.write_text(json.dumps({"image": {"tag": image_tag}}))
    with pytest.raises(LisError, match="no context tasks at") as e:
        stage.run(stage.resolve(load(root)), {"context_tasks": tmp_path / "none.jsonl", "image_manifest": manifest},
                  {"out": tmp_path / "out"})
    assert e.value.hint == "run the context_tasks stage first"


def test_the_declaration_is_the_registrys():
    assert registry.stage("teacher") == stage.STAGE
    assert stage.STAGE.entry == "lis.stages.teacher:run"
    assert load_samples("math")  # the scripted teacher's benchmark episodes draw from the samples in data/

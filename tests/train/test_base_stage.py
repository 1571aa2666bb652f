"""The ``base`` stage (lis/stages/base.py): its command writes what its ``run`` writes, from the settings
its ``resolve`` makes of the params; the declaration is what dvc.yaml and the Snakemake rule are rendered from. A
tiny base small enough to build in seconds (with context tasks in its tokenizer's corpus), and a local
folder copied in (source path)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lis.errors import ParamsError
from lis.params import load
from lis.stages import base as stage
from lis.stages import registry
from lis.tasks import load_samples
from lis.tasks.io import write_tasks
from tests.conftest import lis, one_line_error, params_project

pytestmark = pytest.mark.training

TINY = {"vocab_size": 512, "max_context": 256, "arch": {"hidden_size": 16, "intermediate_size": 32,
                                                        "num_hidden_layers": 1, "num_attention_heads": 2,
                                                        "num_key_value_heads": 1, "head_dim": 8},
        "stdlib_files": 1, "corpus_episodes": 4, "corpus_context_tasks": 2}


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _untimed(manifest: dict) -> dict:
    return {k: v for k, v in manifest.items() if k != "timings_s"}


def test_the_command_builds_the_tiny_base_run_builds(tmp_path):
    """Source tiny: the command's model (weights, tokenizer, config) is byte for byte the one ``run``
    builds from the settings ``resolve`` makes of the same params, and its manifest (printed and
    written) is ``run``'s but for the timings."""
    root = params_project(tmp_path, "base", {"source": "tiny", "seed": 3, "tiny": TINY})
    context = tmp_path / "context.jsonl"
    write_tasks(context, load_samples("math")[:3])
    r = lis(["lis", "train", "base", "--params", root / "params.yaml", "--context-tasks", context, "--out",
             tmp_path / "cmd"])
    settings = stage.resolve(load(params_file=root / "params.yaml"))
    assert (settings.source, settings.seed, settings.hub.model) == ("tiny", 3, "Qwen/Qwen3-4B-Instruct-2507")
    assert settings.tiny.model_dump() == TINY
    manifest = stage.run(settings, {"context_tasks": context}, {"out": tmp_path / "run"})
    written = _files(tmp_path / "cmd")
    again = _files(tmp_path / "run")
    assert {k: v for k, v in written.items() if k != "manifest.json"} == {k: v for k, v in again.items()
                                                                         if k != "manifest.json"}
    on_disk = json.loads(written["manifest.json"])
    assert _untimed(on_disk) == _untimed(json.loads(again["manifest.json"])) == _untimed(manifest)
    assert json.loads(r.stdout) == {k: v for k, v in on_disk.items() if k != "versions"}
    assert on_disk["corpus"]["context_tasks"] == 2 and on_disk["hidden_size"] == 16


def test_the_command_copies_a_local_folder_as_run_does(tmp_path):
    """Source path: the folder copied in, with the same manifest, by the command and by ``run``."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "qwen3"}\n')
    (model / "weights.bin").write_bytes(bytes(range(256)))
    root = params_project(tmp_path, "base", {"source": "path", "path": str(model)})
    r = lis(["lis", "train", "base", "--params", root / "params.yaml", "--out", tmp_path / "cmd"])
    settings = stage.resolve(load(params_file=root / "params.yaml"))
    assert (settings.source, settings.path) == ("path", str(model))
    assert stage.run(settings, {}, {"out": tmp_path / "run"}) == json.loads(r.stdout)
    assert _files(tmp_path / "cmd") == _files(tmp_path / "run")
    assert json.loads((tmp_path / "run" / "manifest.json").read_text()) == {"kind": "base", "source": "path",
                                                                           "path": str(model)}


def test_bad_input_is_one_line(tmp_path):
    """Missing context tasks (the command: one error line), and a source path without a path."""
    root = params_project(tmp_path, "base", {"source": "tiny", "tiny": TINY})
    r = lis(["lis", "train", "base", "--params", root / "params.yaml", "--context-tasks", tmp_path / "none.jsonl",
             "--out", tmp_path / "cmd"], check=False)
    one_line_error(r, f"no context tasks at {tmp_path / 'none.jsonl'}", "lis context-tasks")
    assert not (tmp_path / "cmd").exists()
    root = params_project(tmp_path / "path", "base", {"source": "path", "path": None})
    with pytest.raises(ParamsError, match="base: source is path but path is empty"):
        stage.resolve(load(params_file=root / "params.yaml"))


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("base") == stage.STAGE
    assert stage.STAGE.entry == "lis.stages.base:run" and stage.STAGE.outs == ("data/models/base",)

"""The ``model_card`` stage (lis/stages/model_card.py): its command writes the card its ``run`` writes,
from the settings its ``resolve`` makes of the params, and fails as ``resolve`` does; the declaration is
what dvc.yaml and the Snakemake rule use."""
from __future__ import annotations

import json

import pytest

from lis.errors import LisError
from lis.params import load
from lis.runtime import model_spec
from lis.stages import model_card as stage
from lis.stages import registry
from tests.conftest import ROOT, lis

PARAMS = ROOT / "params.yaml"


@pytest.mark.parametrize("model", ["qwen3-4b-instruct-2507", "base"])
def test_the_command_runs_the_stage(tmp_path, model):
    """A served model and a local folder (relative in params): the command's card.json is byte for byte
    the one ``run`` writes, and ``run`` returns what it wrote."""
    out = tmp_path / "cmd"
    lis(["lis", "model", "card", "--model", model, "--out", str(out)])
    settings = stage.resolve(load(params_file=PARAMS), model)
    p = load(ROOT)
    assert settings == stage.Settings(model=model, entry=p.data["models"][model], spec=model_spec(p, model))
    again = tmp_path / "run" / model
    card = stage.run(settings, {}, {"out": again})
    assert (again / "card.json").read_bytes() == (out / "card.json").read_bytes()
    assert json.loads((out / "card.json").read_text()) == json.loads(json.dumps(card))
    assert card["name"] == model and card["trained_here"] is False


def test_an_unknown_model_fails_as_resolve_does(tmp_path):
    out = tmp_path / "card"
    r = lis(["lis", "model", "card", "--model", "gpt-9", "--out", str(out)], check=False)
    with pytest.raises(LisError) as e:
        stage.resolve(load(params_file=PARAMS), "gpt-9")
    assert r.returncode == 2 and r.stderr.strip() == f"error: {e.value.one_line()}" and not out.exists()


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("model_card") == stage.STAGE
    assert stage.STAGE.outs == ("data/models/${item}",)

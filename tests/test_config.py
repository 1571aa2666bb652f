"""Typed params (lis.config): the schema file is generated from the section models, every section
has a model, and an unknown key anywhere is one line naming the key and its section."""
from __future__ import annotations

import pytest
import yaml
from pydantic import BaseModel

from lis.config import SECTIONS, ParamsModel, params_schema, render_yaml
from lis.errors import ParamsError
from lis.params import SCHEMA_FILE, load
from tests.conftest import ROOT, lis

SECTION_NAMES = sorted(yaml.safe_load((ROOT / "params.yaml").read_text()).keys() - {"profile", "models"})


def test_the_schema_file_is_the_one_the_models_generate():
    """Edit lis/config, then `lis params schema --write`: the file and the models never part."""
    assert (ROOT / SCHEMA_FILE).read_text() == render_yaml(), "run `lis params schema --write`"


def test_lis_params_schema_check_says_when_the_file_is_stale(tmp_path):
    assert "up to date" in lis(["lis", "params", "schema", "--check"]).stdout
    stale = tmp_path / "schema.yaml"
    stale.write_text("type: object\n")
    r = lis(["lis", "params", "schema", "--check", "--file", str(stale)], check=False)
    assert r.returncode == 2 and "lis params schema --write" in r.stderr and "Traceback" not in r.stderr
    lis(["lis", "params", "schema", "--write", "--file", str(stale)])
    assert stale.read_text() == render_yaml()


def test_every_section_of_params_yaml_has_a_model():
    assert set(SECTION_NAMES) <= set(SECTIONS)
    assert set(params_schema()["properties"]) == {"profile", "models", *SECTIONS}


def _models(model: type[BaseModel]):
    yield model
    for f in model.model_fields.values():
        for t in (f.annotation, *getattr(f.annotation, "__args__", ())):
            for u in (t, *getattr(t, "__args__", ())):
                if isinstance(u, type) and issubclass(u, BaseModel):
                    yield from _models(u)


def test_every_model_is_closed_and_strict():
    for m in set(_models(ParamsModel)):
        assert m.model_config.get("extra") == "forbid", m
        assert m.model_config.get("strict") is True, m


@pytest.mark.parametrize("section", SECTION_NAMES)
def test_an_unknown_key_in_any_section_is_one_line_naming_it(proj, section):
    data = yaml.safe_load((proj / "params.yaml").read_text())
    data[section]["colour"] = "blue"
    (proj / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ParamsError) as e:
        load(proj)
    line = e.value.one_line()
    assert "\n" not in line and line.startswith(f"params.yaml: {section}.colour: unknown key"), line


@pytest.mark.parametrize("section", SECTION_NAMES)
def test_every_section_reads_as_its_typed_model(section):
    p = load(ROOT, profile="full")
    typed = p.settings(section)
    assert isinstance(typed, SECTIONS[section])
    assert typed.model_dump(exclude_unset=True) == p.section(section)


def test_the_models_fill_in_what_a_section_leaves_out(proj):
    """A key left out takes the model's default, which is the one the code used before (and the
    sandbox's runtime Limits take theirs from the model)."""
    from lis.sandbox.base import Limits

    data = yaml.safe_load((proj / "params.yaml").read_text())
    data["sandbox"]["limits"] = {}
    for key in ("min_n", "paper_version", "trajectories"):
        data["report"].pop(key, None)
    (proj / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    p = load(proj, profile="full")
    assert p.settings("sandbox").limits.model_dump() == vars(Limits()) == {
        **vars(Limits()), "nofile": 4096, "memory_mb": 2048, "testbed_mb": 768}
    report = p.settings("report")
    assert (report.min_n, report.paper_version, report.trajectories) == (30, "v1", True)

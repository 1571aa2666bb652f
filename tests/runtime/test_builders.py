"""The params → runtime-objects builders (lis.runtime): the objects every stage runs with, built from
the repository's real params (every profile), compared with the params values they come from."""
from __future__ import annotations

import dataclasses
import json

import pytest

from lis.agent.tools.dispatch import ToolSettings
from lis.errors import LisError
from lis.models.base import Sampling
from lis.params import load
from lis.runtime import MODELS_HINT, agent_config, chat_model, episode_seed, model_spec, sandbox_config
from lis.sandbox.factory import config_from_params
from tests.conftest import ROOT

PROFILES = ("ci", "smoke", "full")


# Without an image manifest the image tag is computed, and its build path depends on whether a
# registry answers: the engine is asked (lis.sandbox.image.build.expected_tag). `make test-fast` leaves these out.
needs_engine = pytest.mark.docker


@pytest.fixture(scope="module", params=PROFILES)
def p(request):
    return load(ROOT, profile=request.param)


# -- models -----------------------------------------------------------------------------------------
def test_model_spec_is_the_entry_with_local_folders_under_the_project_root(p):
    for name, entry in p.section("models").items():
        spec = model_spec(p, name)
        if entry.get("backend") == "local":
            assert spec["path"] == str(p.root / entry["path"])
            assert {k: v for k, v in spec.items() if k != "path"} == {k: v for k, v in entry.items() if k != "path"}
        else:
            assert spec == entry


def test_model_spec_keeps_absolute_folders_and_returns_a_copy(proj):
    p = load(proj, profile="ci")
    p.data["models"]["abs"] = {"backend": "local", "path": "/opt/models/x", "sampling": {"temperature": 0.5}}
    spec = model_spec(p, "abs")
    assert spec["path"] == "/opt/models/x"
    spec["path"] = "changed"
    spec["sampling"]["temperature"] = 2.0
    assert p.data["models"]["abs"] == {"backend": "local", "path": "/opt/models/x", "sampling": {"temperature": 0.5}}


def test_an_unknown_model_names_the_entries_and_says_what_to_do(p):
    with pytest.raises(LisError) as err:
        model_spec(p, "no-such-model")
    assert "no model named 'no-such-model' in params (models: " in str(err.value)
    assert "sft" in str(err.value) and err.value.hint == MODELS_HINT
    with pytest.raises(LisError) as err:
        model_spec(p, "no-such-model", hint="pick one with --model")
    assert err.value.hint == "pick one with --model"


def test_chat_model_builds_the_entry(proj):
    p = load(proj, profile="ci")
    p.data["models"]["served"] = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                                  "sampling": {"temperature": 0.3}}
    m = chat_model(p, "served")
    assert (m.name, m.model, m.base_url, m.sampling.temperature) == ("served", "m", "http://127.0.0.1:9/v1", 0.3)
    with pytest.raises(LisError, match="no model named 'nope'"):
        chat_model(p, "nope")


# -- agent ------------------------------------------------------------------------------------------
def test_agent_config_is_the_agent_section(p):
    a = p.section("agent")
    cfg = agent_config(p)
    assert (cfg.max_turns, cfg.max_context_tokens, cfg.episode_timeout_s) == \
        (a["max_turns"], a["max_context_tokens"], float(a["episode_timeout_s"]))
    obs = a["observation"]
    assert (cfg.tools.max_lines, cfg.tools.keep, cfg.tools.max_chars) == (obs["max_lines"], obs["keep"], obs["max_chars"])
    assert cfg.sampling == Sampling()  # no model entry: the defaults
    default = ToolSettings()  # no sandbox (vanilla): the tools' own limits
    assert (cfg.tools.command_timeout_s, cfg.tools.max_output_bytes) == (default.command_timeout_s,
                                                                         default.max_output_bytes)


@needs_engine
def test_agent_config_takes_the_domains_context_the_models_sampling_and_the_sandboxs_limits(p):
    a = p.section("agent")
    by_domain = a["max_context_tokens_by_domain"]
    for domain in ("math", *by_domain):
        assert agent_config(p, domain=domain).max_context_tokens == by_domain.get(domain, a["max_context_tokens"])
    spec = model_spec(p, "sft")
    assert agent_config(p, spec=spec).sampling == Sampling(**spec["sampling"])
    box = sandbox_config(p, run_id="pytest-runtime")
    cfg = agent_config(p, spec=spec, domain="math", sandbox=box)
    assert (cfg.tools.command_timeout_s, cfg.tools.max_output_bytes) == (box.command_timeout_s,
                                                                         box.limits.max_output_bytes)
    assert dataclasses.replace(cfg, tools=agent_config(p, spec=spec, domain="math").tools) == \
        agent_config(p, spec=spec, domain="math")


def test_view_extensions_become_a_tuple(p):
    agent = {**p.data["agent"], "editor": {"view_extensions": [".py", ".md"]}}
    q = dataclasses.replace(p, data={**p.data, "agent": agent})
    assert agent_config(q).tools.view_extensions == (".py", ".md")


# -- sandbox ----------------------------------------------------------------------------------------
@needs_engine
def test_sandbox_config_is_the_sandbox_and_image_sections(p):
    assert sandbox_config(p, run_id="r") == config_from_params(p.section("sandbox"), p.section("image"), run_id="r")
    assert sandbox_config(p, run_id="r", backend="docker") == \
        config_from_params(p.section("sandbox"), p.section("image"), run_id="r", backend="docker")


@needs_engine
def test_sandbox_overrides_replace_keys_and_unset_ones_leave_the_sections(p):
    sec = p.section("sandbox")
    same = sandbox_config(p, run_id="r", overrides={"backend": None, "network": ""})
    assert (same.backend, same.network) == (sec["backend"], sec["network"])
    other = "bridge" if sec["network"] == "none" else "none"
    cfg = sandbox_config(p, run_id="r", overrides={"backend": "docker", "network": other})
    assert (cfg.backend, cfg.network) == ("docker", other)
    assert p.section("sandbox") == sec  # the params are not changed


def test_a_bad_stage_backend_is_refused(p):
    with pytest.raises(LisError, match="sandbox backend 'podman' is not docker, bwrap or auto"):
        sandbox_config(p, run_id="r", backend="podman")


@needs_engine
def test_built_image_reads_the_projects_image_manifest_for_docker(proj):
    p = load(proj, profile="ci")
    without = sandbox_config(p, run_id="r", overrides={"backend": "docker"}, built_image=True)
    path = proj / "data/image/manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"image": {"tag": "lis-sandbox:from-manifest"}}))
    assert sandbox_config(p, run_id="r", overrides={"backend": "docker"}, built_image=True).image == \
        "lis-sandbox:from-manifest"
    assert sandbox_config(p, run_id="r", overrides={"backend": "docker"}).image == without.image != \
        "lis-sandbox:from-manifest"  # not asked for: the params' tag
    given = {"image": {"tag": "lis-sandbox:given"}}
    assert sandbox_config(p, run_id="r", overrides={"backend": "docker"}, image_manifest=given,
                          built_image=True).image == "lis-sandbox:given"


# -- seeds ------------------------------------------------------------------------------------------
def test_episode_seeds_are_pinned():
    """The numbers journals and published runs were made with: they must never change."""
    assert episode_seed(0, "math-0001", 0) == 1534156888
    assert episode_seed(0, "math-0001", 1) == 4163916191
    assert episode_seed(7, "chem/12", 3) == 2548870837
    assert all(0 <= episode_seed(b, "t", r) < 2**32 for b in range(3) for r in range(3))

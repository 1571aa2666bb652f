"""params.yaml + profile overlays + schema: merging, and one-line errors that name the key."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from lis.errors import ParamsError
from lis.params import available_profiles, deep_merge, load
from tests.conftest import ROOT, lis


def edit(path: Path, fn) -> None:
    data = yaml.safe_load(path.read_text())
    fn(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_repository_params_are_valid_in_every_profile():
    assert set(available_profiles(ROOT)) >= {"smoke", "ci", "full"}
    for name in available_profiles(ROOT):
        p = load(ROOT, profile=name)
        assert p.profile == name
        assert set(p.sections) == {k for k in p.data if k != "profile"}


def test_overlay_is_deep_merged(proj):
    edit(proj / "workflow/params/ci.yaml", lambda d: d.update(report={"title": "CI title"}))
    assert load(proj, profile="ci").section("report")["title"] == "CI title"
    base = load(proj, profile="full").section("sandbox")["limits"]
    ci = load(proj, profile="ci").section("sandbox")["limits"]
    assert ci["memory_mb"] == 1024 != base["memory_mb"]
    assert ci["cpus"] == base["cpus"]  # untouched keys of a merged dict survive


def test_deep_merge_replaces_lists_and_scalars():
    assert deep_merge({"a": {"b": [1, 2], "c": 1}}, {"a": {"b": [3]}}) == {"a": {"b": [3], "c": 1}}


def test_full_profile_needs_more_than_smoke():
    assert "gpu" in load(ROOT, profile="full").section("doctor")["needs"]
    assert "gpu" not in load(ROOT, profile="smoke").section("doctor")["needs"]


def test_section_hash_changes_only_with_its_section(proj):
    before = load(proj)
    edit(proj / "params.yaml", lambda d: d["report"].update(title="other"))
    after = load(proj)
    assert before.section_hash("image") == after.section_hash("image")
    assert before.section_hash("report") != after.section_hash("report")


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["image"].update(bild="auto"), "image.bild: unknown key"),
    (lambda d: d.update(imagee={}), "imagee: unknown key"),
    (lambda d: d["image"].update(uid="thousand"), "image.uid: expected integer, got 'thousand'"),
    (lambda d: d["image"].update(build="podman"), "image.build: 'podman' is not one of"),
    (lambda d: d["image"].pop("suite"), "image.suite: required key is missing"),
    (lambda d: d["jobs"].update(domains=["math", "cooking"]), "jobs.domains.1: 'cooking' is not one of"),
])
def test_broken_params_yaml_names_the_key(proj, mutate, expected):
    edit(proj / "params.yaml", mutate)
    with pytest.raises(ParamsError) as e:
        load(proj)
    assert expected in e.value.one_line()
    assert e.value.one_line().startswith("params.yaml: ")
    assert "\n" not in e.value.one_line()


def test_unknown_key_lists_allowed_keys(proj):
    edit(proj / "params.yaml", lambda d: d["image"].update(bild="auto"))
    with pytest.raises(ParamsError, match=r"allowed in image: .*build"):
        load(proj)


def test_overlay_errors_name_the_overlay_file(proj):
    edit(proj / "workflow/params/ci.yaml", lambda d: d.update(image={"uid": -3}))
    with pytest.raises(ParamsError, match=r"workflow/params/ci.yaml: image.uid"):
        load(proj, profile="ci")


def test_an_overlay_names_a_section_that_another_overlay_sets(proj):
    """DVC tracks a section in the profile's overlay when the overlays name it: then every one must."""
    edit(proj / "workflow/params/ci.yaml", lambda d: d.pop("sft"))
    with pytest.raises(ParamsError) as e:
        load(proj, profile="ci")
    assert ("ci.yaml: missing section(s) sft (another overlay sets sft, and DVC tracks a section in every overlay "
            "or in none; add `sft: {}`") in e.value.one_line()


def test_a_section_no_overlay_sets_is_named_in_params_yaml_alone(proj):
    for name in ("ci", "smoke", "full"):
        assert "scoring" not in yaml.safe_load((proj / f"workflow/params/{name}.yaml").read_text())
    assert load(proj, profile="ci").settings("scoring") == load(proj, profile="full").settings("scoring")


def test_overlay_cannot_invent_sections_or_set_profile(proj):
    edit(proj / "workflow/params/ci.yaml", lambda d: d.update(evall={}))
    with pytest.raises(ParamsError, match="evall: unknown section"):
        load(proj, profile="ci")
    edit(proj / "workflow/params/ci.yaml", lambda d: (d.pop("evall"), d.update(profile="full")))
    with pytest.raises(ParamsError, match="'profile' cannot be set in a profile overlay"):
        load(proj, profile="ci")


def test_unknown_profile_lists_available(proj):
    with pytest.raises(ParamsError, match=r"unknown profile 'huge' \(available: ci, full, smoke, vllm\)"):
        load(proj, profile="huge")


def test_an_overlay_extends_another_and_names_only_what_differs(proj):
    vllm, smoke = load(proj, profile="vllm").data, load(proj, profile="smoke").data
    assert vllm["models"]["sft"]["backend"] == "openai" and vllm["models"]["sft"]["serve"]["auto"] is True
    assert vllm["models"]["sft"]["serve"]["model"] == "data/models/sft" and vllm["models"]["sft"]["path"] is None
    assert {k: v for k, v in vllm.items() if k not in ("models", "profile")} == \
        {k: v for k, v in smoke.items() if k not in ("models", "profile")}
    (proj / "workflow/params/mine.yaml").write_text("extends: vllm\nsft: {steps: 7}\n")
    mine = load(proj, profile="mine").data
    assert mine["sft"]["steps"] == 7 and mine["models"] == vllm["models"] and mine["grpo"] == smoke["grpo"]
    (proj / "workflow/params/mine.yaml").write_text("extends: mine\n")
    with pytest.raises(ParamsError, match="extends: 'mine' is not a profile it can extend \\(a cycle\\)"):
        load(proj, profile="mine")
    (proj / "workflow/params/mine.yaml").write_text("extends: huge\n")
    with pytest.raises(ParamsError, match="extends: 'huge' is not a profile it can extend"):
        load(proj, profile="mine")


def test_invalid_yaml_reports_line(proj):
    (proj / "params.yaml").write_text("profile: smoke\nimage: [unclosed\n")
    with pytest.raises(ParamsError, match=r"params.yaml line \d+: not valid YAML"):
        load(proj)


def test_cli_rejects_broken_params_with_one_line(proj):
    edit(proj / "params.yaml", lambda d: d["image"].update(timeout_s="soon"))
    r = lis(["lis", "params", "check", "--params", str(proj / "params.yaml")], check=False)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0, r.stderr
    assert "image.timeout_s: expected integer, got 'soon'" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_check_all_profiles_and_show():
    r = lis(["lis", "params", "check", "--all"])
    assert {"ok: profile smoke", "ok: profile ci", "ok: profile full"} <= set(r.stdout.splitlines())
    shown = yaml.safe_load(lis(["lis", "params", "show", "image", "--profile", "ci"]).stdout)
    assert shown["user"] == "sandbox"


def test_jobs_must_name_model_entries(proj):
    edit(proj / "params.yaml", lambda d: d["jobs"].update(models=["sft", "gpt-9"]))
    with pytest.raises(ParamsError, match="jobs.models: 'gpt-9' is not a models entry"):
        load(proj)


def test_evaluated_models_are_trained_here_or_external(proj):
    edit(proj / "params.yaml", lambda d: d["jobs"].update(models=["sft", "qwen3-4b-instruct-2507"]))
    with pytest.raises(ParamsError, match="'qwen3-4b-instruct-2507' is neither trained here .* nor listed in jobs.external"):
        load(proj)
    edit(proj / "params.yaml", lambda d: d["jobs"].update(external=["qwen3-4b-instruct-2507"]))
    load(proj)
    edit(proj / "params.yaml", lambda d: d["jobs"].update(external=["sft"]))
    with pytest.raises(ParamsError, match="jobs.external: 'sft' is a model this pipeline trains"):
        load(proj)


def test_ablation_needs_long_context(proj):
    edit(proj / "params.yaml", lambda d: d["jobs"].update(domains=["math"]))
    with pytest.raises(ParamsError, match="long_context_ablation needs long_context in jobs.domains"):
        load(proj)


def test_job_lists_cannot_come_from_an_overlay(proj):
    edit(proj / "workflow/params/ci.yaml", lambda d: d.update(jobs={"models": ["sft"]}))
    with pytest.raises(ParamsError, match="'jobs' cannot be set in a profile overlay"):
        load(proj, profile="ci")


JUDGE = "qwen3-235b-a22b-instruct-2507"


def test_the_papers_judge_is_shipped_and_its_commented_example_is_valid(proj):
    """models has the paper's judge entry; uncommenting scoring.judge's example gives valid params in every
    profile, and the entry, pointed at a server, judges through the OpenAI-compatible client."""
    from lis.models.registry import build_model
    from lis.models.scripted import ScriptedModel
    from lis.models.server import ChatServer
    from lis.rewards import Judge, score

    spec = load(ROOT).section("models")[JUDGE]
    assert (spec["backend"], spec["model"]) == ("openai", "Qwen/Qwen3-235B-A22B-Instruct-2507")
    assert spec["base_url"].startswith("http://localhost:") and spec["sampling"]["temperature"] == 0.7
    (line,) = [x for x in (ROOT / "params.yaml").read_text().splitlines() if x.strip().startswith("# judge:")]
    example = yaml.safe_load(line.strip()[2:])["judge"]
    assert example["model"] == JUDGE
    edit(proj / "params.yaml", lambda d: d["scoring"].update(judge=example))
    for name in available_profiles(proj):
        assert load(proj, profile=name).section("scoring")["judge"] == example
    with ChatServer(ScriptedModel(["CORRECT"] * 4)) as srv:
        judge = Judge(build_model(JUDGE, {**spec, "base_url": srv.base_url}), repeats=example["repeats"],
                      temperature=example["temperature"], max_tokens=example["max_tokens"])
        result = score("long_context", "12", "12", judge=judge, prompt="How many?")
        assert srv.requests[0]["model"] == "Qwen/Qwen3-235B-A22B-Instruct-2507"
    assert (result.value, result.scorer) == (1.0, f"judge:{JUDGE}")


BOMB = "\n".join(['x_a0: &a0 ["x","x","x","x","x","x","x","x","x"]'] +
                 [f"x_a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]) + "\n"


@pytest.mark.parametrize("extra, expected", [
    ("x_deep: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 64 levels"),
    (BOMB, "aliases expand to more than 1,000,000 values"),     # ~400 bytes standing for 9^9 values
    ("x_self: &s [1, *s]\n", "an alias refers to a value that holds it"),
])
def test_a_hostile_params_file_is_refused_in_one_line_and_fast(proj, extra, expected):
    import time

    path = proj / "params.yaml"
    path.write_text(path.read_text() + extra)
    t0 = time.monotonic()
    r = lis(["lis", "params", "check", "--params", str(path)], check=False)
    assert time.monotonic() - t0 < 30  # it used to crash (nesting) or run for minutes (the alias bomb)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr, r.stderr
    assert expected in r.stderr, r.stderr


def test_the_repositorys_own_aliases_are_fine():
    # params.yaml's models share one &trained entry, the ci overlay a &tiny one
    assert "&trained" in (ROOT / "params.yaml").read_text() and "&tiny" in (ROOT / "workflow/params/ci.yaml").read_text()
    load(ROOT, profile="ci")


def test_params_show_key_says_which_file_set_it_and_what_it_overrode(proj):
    """An edit to params.yaml that the profile's overlay overrides is visible: `lis params show KEY`
    prints the effective value and the file that set it."""
    edit(proj / "params.yaml", lambda d: d["agent"].update(episode_timeout_s=4321))
    edit(proj / "workflow/params/smoke.yaml", lambda d: d["agent"].update(episode_timeout_s=300))
    r = lis(["params", "show", "agent.episode_timeout_s", "--profile", "smoke"], cwd=proj)
    assert r.stdout.splitlines() == ["agent.episode_timeout_s: 300",
                                     "# profile smoke: agent.episode_timeout_s: set by workflow/params/smoke.yaml; "
                                     "it overrides params.yaml (4321)"], r.stdout
    r = lis(["params", "show", "agent.episode_timeout_s", "--profile", "full"], cwd=proj)
    assert r.stdout.splitlines()[0] == "agent.episode_timeout_s: 4321" and "set by params.yaml" in r.stdout
    # a key holding dots, a mapping merged from several files, and a key only the schema's default gives
    r = lis(["params", "show", "models.deepseek-v3.2.backend", "--profile", "full"], cwd=proj)
    assert r.stdout.startswith("models.deepseek-v3.2.backend: openai\n") and "set by params.yaml" in r.stdout
    r = lis(["params", "show", "agent", "--profile", "smoke"], cwd=proj)
    assert "episode_timeout_s: 300" in r.stdout and "set by params.yaml + workflow/params/smoke.yaml" in r.stdout
    r = lis(["params", "show", "models.base.serve.startup_timeout_s", "--profile", "full"], cwd=proj)
    assert r.stdout.startswith("models.base.serve.startup_timeout_s: 1800") and "the section model's default" in r.stdout
    r2 = lis(["params", "show", "agent.no_such_key"], cwd=proj, check=False)
    assert r2.returncode == 2 and "no key 'agent.no_such_key'" in r2.stderr and "episode_timeout_s" in r2.stderr


def test_a_local_entry_takes_the_batch_engine_settings_the_registry_reads(proj):
    """max_batch, max_batch_tokens and prefix_cache_mb (lis/models/registry.py) are params of a local
    entry: the params accept them and refuse a bad value in one line."""
    from lis.models.registry import BACKEND_KEYS
    from lis.config.models import ModelEntry

    assert BACKEND_KEYS["local"] <= set(ModelEntry.model_fields)  # every key the registry reads is a params key
    edit(proj / "params.yaml", lambda d: d["models"]["sft"].update(prefix_cache_mb=256, max_batch=8,
                                                                     max_batch_tokens=4096))
    sft = load(proj, profile="smoke").section("models")["sft"]
    assert (sft["prefix_cache_mb"], sft["max_batch"], sft["max_batch_tokens"]) == (256, 8, 4096)
    edit(proj / "params.yaml", lambda d: d["models"]["sft"].update(prefix_cache_mb=-1))
    with pytest.raises(ParamsError, match="prefix_cache_mb"):
        load(proj, profile="smoke")


def test_keys_the_profile_overrides_are_named_where_a_reader_looks():
    """params.yaml keys that the active overlay sets to another value are the ones whose edit has no effect: listed
    with the overlay that wins (a key the overlay sets to params.yaml's own value is not); a stage's log file names
    those of its sections, and a stderr that a program reads stays free of it (the note is for a person)."""
    from lis.params import overridden, overridden_note

    smoke = load(ROOT, profile="smoke")
    keys = overridden(smoke, ("sft", "agent"))
    assert keys["sft.steps"] == keys["agent.episode_timeout_s"] == "workflow/params/smoke.yaml"
    assert smoke.data["sft"]["threads"] == yaml.safe_load((ROOT / "params.yaml").read_text())["sft"]["threads"]
    assert "sft.threads" not in keys  # smoke sets it, to params.yaml's value
    assert overridden(load(ROOT, profile="full"), ("sft", "agent", "grpo")) == {}
    note = overridden_note(smoke, ("sft",))
    assert note.startswith("note: profile smoke") and "sft.steps" in note and "\n" not in note


def test_a_stage_notes_the_overridden_keys_in_its_log_file(tmp_path):
    log = tmp_path / "sft.log"
    r = lis(["train", "sft", "--profile", "smoke", "--data", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "m"),
             "--log", str(log)], check=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("error: no trajectories")
    lines = [x for x in log.read_text().splitlines() if "note: profile smoke" in x]
    assert len(lines) == 1 and "sft.steps" in lines[0] and "agent." not in lines[0], log.read_text()


def test_set_overrides_one_key_and_is_checked_as_a_params_file(proj):
    """`--set KEY=VALUE` (every stage command): the value is YAML, merged over the profile's params and
    validated by the same models; a bad one is one line naming it."""
    from lis.params import with_overrides

    p = load(proj, profile="ci")
    q = with_overrides(p, ["sft.lr=0.002", "agent.observation.max_lines=90"])
    assert q.settings("sft").lr == 0.002 and q.settings("agent").observation.max_lines == 90
    assert q.settings("sft").steps == p.settings("sft").steps and p.settings("sft").lr != 0.002
    for bad, expected in [("sft.lr", "--set 'sft.lr': expected KEY=VALUE"),
                          ("sft.colour=blue", "--set: sft.colour: unknown key (allowed in sft: "),
                          ("sft.lr=fast", "--set: sft.lr: expected number, got 'fast' (str)"),
                          ("nosuch.x=1", "--set nosuch.x: unknown section 'nosuch'"),
                          ("profile=full", "--set profile: the profile is chosen with --profile")]:
        with pytest.raises(ParamsError) as e:
            with_overrides(p, [bad])
        assert e.value.one_line().startswith(expected), e.value.one_line()


def test_a_stage_command_takes_set(proj, tmp_path):
    """The override reaches the stage: `lis model card --set` records the entry as overridden."""
    out = tmp_path / "card"
    lis(["lis", "model", "card", "--model", "qwen3-4b-instruct-2507", "--out", out, "--params", proj / "params.yaml",
         "--set", "models.qwen3-4b-instruct-2507.timeout_s=123"], cwd=proj)
    card = json.loads((out / "card.json").read_text())
    assert card["entry"]["timeout_s"] == 123, card
    r = lis(["lis", "model", "card", "--model", "qwen3-4b-instruct-2507", "--out", out, "--params", proj / "params.yaml",
             "--set", "models.qwen3-4b-instruct-2507.colour=1"], cwd=proj, check=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "colour: unknown key" in r.stderr, r.stderr

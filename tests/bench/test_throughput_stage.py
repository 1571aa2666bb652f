"""The ``throughput`` stage (lis/stages/throughput.py): its command writes what its ``run`` measures
(but for the clock), from the settings its ``resolve`` makes of the options and params; the
declaration is what dvc.yaml and the Snakemake rule are rendered from. Vanilla mode against a scripted model
called in-process: no Docker, no server (the sandbox mode end to end: tests/bench/test_throughput.py)."""
from __future__ import annotations

import json

import yaml

from lis.params import load
from lis.stages import registry
from lis.stages import throughput as stage
from tests.conftest import lis

ANSWER = "The answer is \\boxed{1}."


def _untimed(res: dict) -> dict:
    """What does not depend on the clock: the settings, tasks, model, profile and what each run did."""
    keys = ("mode", "repeat", "queries", "completed", "errors", "terminations")
    runs = [{k: r[k] for k in keys} for r in res["runs"]]
    return {"settings": res["settings"], "tasks": res["tasks"], "model": res["model"], "profile": res["profile"],
            "runs": runs}


def test_the_command_runs_the_stage(repo_copy):
    """Two vanilla runs of one math task: the command's file and summary are what ``run`` writes and
    returns from the settings ``resolve`` makes of the same options, but for the clock."""
    path = repo_copy / "params.yaml"
    data = yaml.safe_load(path.read_text())
    data["models"]["scripted-answer"] = {"backend": "scripted", "replies": [ANSWER] * 4}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    lis(["lis", "tasks", "--domain", "math", "--profile", "ci", "--out", "data/tasks/math.jsonl"], cwd=repo_copy)
    options = {"model": "scripted-answer", "domains": ["math"], "tasks": 1, "concurrency": 1, "repeats": 2,
               "modes": ["vanilla"], "warmup": 0, "serve": "direct"}
    r = lis(["lis", "throughput", "--profile", "ci", "--model", "scripted-answer", "--domains", "math", "--tasks", "1",
             "--concurrency", "1", "--repeats", "2", "--modes", "vanilla", "--warmup", "0", "--serve", "direct",
             "--out", "cmd.json"], cwd=repo_copy)
    written = json.loads((repo_copy / "cmd.json").read_text())
    assert json.loads(r.stdout) == written["summary"]

    settings = stage.resolve(load(repo_copy, profile="ci"), **options)
    assert settings.throughput.model == "scripted-answer" and settings.throughput.repeats == 2
    res = stage.run(settings, {"tasks_dir": repo_copy / "data/tasks"}, {"out": repo_copy / "run.json"})
    assert _untimed(json.loads((repo_copy / "run.json").read_text())) == _untimed(written)
    assert _untimed(json.loads(json.dumps(res))) == _untimed(written)
    did = [(x["mode"], x["completed"], x["terminations"]) for x in written["runs"]]
    assert did == [("vanilla", 1, {"answered": 1})] * 2


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("throughput") == stage.STAGE
    assert stage.STAGE.metrics == ("data/bench/throughput.json",)

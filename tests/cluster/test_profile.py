"""The Slurm profile as Snakemake reads it: every rule it sizes exists, GPU rules ask for GPUs on the
GPU partition, sandbox-heavy rules for CPUs and memory, and the placeholders follow the environment.
(The profile's real run on a Slurm cluster is tests/cluster/test_slurm.py.)"""
from __future__ import annotations

import re
import tomllib

import pytest

from tests.conftest import ROOT, run

PROFILE = ROOT / "workflow/profiles/slurm/config.yaml"
PLUGIN_PIN = "snakemake-executor-plugin-slurm==2.8.0"


def read_profile(monkeypatch, **env) -> dict:
    """The profile parsed by Snakemake's own profile reader (YTE expressions evaluated)."""
    from snakemake.profiles import ProfileConfigFileParser

    for k in ("LIS_SLURM_ACCOUNT", "LIS_SLURM_PARTITION", "LIS_SLURM_GPU_PARTITION"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with PROFILE.open() as f:
        return dict(ProfileConfigFileParser().parse(f))


def resources(profile: dict) -> tuple[dict, dict[str, dict]]:
    """(default resources, {rule: resources}) from the parsed `key=value` / `rule:key=value` lists."""
    def val(v):
        return int(v) if re.fullmatch(r"\d+", v) else v
    default = dict(item.split("=", 1) for item in profile["default-resources"])
    per_rule: dict[str, dict] = {}
    for item in profile["set-resources"]:
        rule, kv = item.split(":", 1)
        k, v = kv.split("=", 1)
        per_rule.setdefault(rule, {})[k] = val(v)
    return {k: val(v) for k, v in default.items()}, per_rule


@pytest.fixture(scope="module")
def workflow_rules() -> set[str]:
    return set(run(["snakemake", "--list-rules"]).stdout.split())


def test_every_sized_rule_is_a_rule_of_the_workflow(monkeypatch, workflow_rules):
    profile = read_profile(monkeypatch)
    assert profile["executor"] == "slurm"
    _, per_rule = resources(profile)
    assert set(per_rule) <= workflow_rules, f"the profile sizes rules the workflow does not have: {set(per_rule) - workflow_rules}"
    # the stages that do real work are all sized (tasks, context tasks, report, cards take the defaults)
    assert {"image", "base", "teacher", "sft", "grpo", "llm_rl", "eval_vanilla", "eval_sandbox", "eval_inline"} <= set(per_rule)


def test_gpu_rules_ask_for_gpus_and_sandbox_rules_for_cpus_and_memory(monkeypatch):
    default, per_rule = resources(read_profile(monkeypatch))
    assert default["slurm_partition"] == "cpu" and default["slurm_account"] == "lis"
    assert default["runtime"] > 0 and default["mem_mb"] > 0 and default["cpus_per_task"] >= 1
    for rule in ("sft", "grpo", "llm_rl"):
        assert per_rule[rule]["gpu"] >= 1 and per_rule[rule]["slurm_partition"] == "gpu", rule
    for rule in ("image", "base", "teacher", "eval_vanilla", "eval_sandbox", "eval_inline"):
        assert "gpu" not in per_rule[rule] and "slurm_partition" not in per_rule[rule], rule
    for rule in ("eval_sandbox", "teacher", "grpo"):  # many sandboxes at once
        assert per_rule[rule]["cpus_per_task"] >= 16 and per_rule[rule]["mem_mb"] >= 65536, rule
    for rule, res in per_rule.items():
        assert res.get("runtime", default["runtime"]) >= 60, rule


def test_account_and_partitions_follow_the_environment(monkeypatch):
    default, per_rule = resources(read_profile(monkeypatch, LIS_SLURM_ACCOUNT="proj42", LIS_SLURM_PARTITION="short",
                                               LIS_SLURM_GPU_PARTITION="a100"))
    assert default["slurm_account"] == "proj42" and default["slurm_partition"] == "short"
    assert {per_rule[r]["slurm_partition"] for r in ("sft", "grpo", "llm_rl")} == {"a100"}


def test_per_job_logs_are_kept(monkeypatch):
    profile = read_profile(monkeypatch)
    assert profile["slurm-logdir"] == "logs/slurm" and str(profile["slurm-keep-successful-logs"]) == "True"


def test_the_plugin_is_a_pinned_optional_extra():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extra = meta["project"]["optional-dependencies"]["slurm"]
    assert PLUGIN_PIN in extra and all("==" in pin for pin in extra)
    assert PLUGIN_PIN not in meta["project"]["dependencies"]
    lock = (ROOT / "requirements.lock").read_text().split()
    assert set(extra) <= set(lock)
    assert any(line.startswith("snakemake-executor-plugin-slurm-jobstep==") for line in lock)

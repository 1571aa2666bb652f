"""Disk that fits memory: the tmpfs quotas are memory, so params refuse quotas that (with a reserve
for processes) exceed the memory limit; a full disk is "No space left on device"; an out-of-memory
kill is reported as such ("out of memory: limit N MB"), with the call that did it in the steps;
Docker keeps no log of what a sandbox prints."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from lis.errors import ParamsError
from lis.params import load
from tests.conftest import ROOT, lis

QUOTAS = ("testbed_mb", "tmp_mb", "home_mb", "var_tmp_mb", "reserve_mb")


def _set_limits(proj: Path, **limits) -> None:
    data = yaml.safe_load((proj / "params.yaml").read_text())
    data["sandbox"]["limits"].update(limits)
    (proj / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.mark.parametrize("profile", ["smoke", "full", "ci"])
def test_every_profile_keeps_its_quotas_and_reserve_within_memory(profile):
    """Today's params had 1,024 + 512 + 1,024 = 2,560 MB of tmpfs under a 2,048 MB memory limit."""
    lim = load(ROOT, profile=profile).section("sandbox")["limits"]
    assert all(k in lim for k in QUOTAS), lim  # the reserve is stated, not implied
    assert sum(lim[k] for k in QUOTAS) <= lim["memory_mb"], lim


def test_params_refuse_quotas_over_the_memory_limit_in_one_line(proj):
    _set_limits(proj, testbed_mb=1024, tmp_mb=512, home_mb=1024, memory_mb=2048)
    with pytest.raises(ParamsError) as e:
        load(proj, profile="full")
    line = e.value.one_line()
    assert "\n" not in line
    assert "exceed memory_mb 2048" in line and "3072 MB" in line, line
    for key in QUOTAS:
        assert f"sandbox.limits.{key}" in line, line  # the keys, and the fix
    assert "raise sandbox.limits.memory_mb" in line
    r = lis(["lis", "params", "check", "--params", str(proj / "params.yaml"), "--profile", "full"], check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "exceed memory_mb 2048" in r.stderr, r.stderr
    _set_limits(proj, memory_mb=3072)  # the other fix: a limit that holds them
    assert load(proj, profile="full").section("sandbox")["limits"]["memory_mb"] == 3072


def test_a_profile_overlay_is_checked_after_merging(proj):
    ci = proj / "workflow/params/ci.yaml"
    data = yaml.safe_load(ci.read_text())
    data["sandbox"]["limits"]["memory_mb"] = 512  # the overlay lowers the limit under params.yaml's quotas
    ci.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ParamsError, match="exceed memory_mb 512"):
        load(proj, profile="ci")


# -- real sandboxes ---------------------------------------------------------------------------------
def _profile_limits(profile: str):
    from lis.sandbox import Limits

    return Limits(**load(ROOT, profile=profile).section("sandbox")["limits"])


@pytest.mark.docker
def test_filling_every_tmpfs_at_once_is_disk_full_not_a_dead_sandbox(base_config, backend):
    """With the smoke profile's limits (the default), a model that fills /testbed, /tmp and its home
    at once used to be OOM-killed (the user saw EOFError). Now it gets "No space left on device" and
    the sandbox lives on."""
    from lis.sandbox import make_sandbox

    lim = _profile_limits("smoke")
    cfg = dataclasses.replace(base_config, backend=backend, limits=lim, command_timeout_s=120)
    with make_sandbox(cfg).start() as sb:
        r = sb.exec("for d in /testbed /tmp $HOME; do head -c 2000M /dev/zero > $d/fill; done; "
                    "df -m --output=used /testbed /tmp $HOME | tail -n 3")
        assert "No space left on device" in r.stderr, r
        used = [int(x) for x in r.stdout.split()]
        assert used[0] >= lim.testbed_mb - 1 and used[1] >= lim.tmp_mb - 1 and used[2] >= lim.home_mb - 1, r
        assert sb.exec("echo alive").stdout == "alive\n"  # the same sandbox, still there
        assert sb.exec("python3 -c 'x = bytearray(200 << 20); print(len(x))'").stdout == f"{200 << 20}\n"


@pytest.mark.docker
def test_an_out_of_memory_kill_is_reported_with_the_limit(base_config, backend):
    """A command over the memory limit: its observation says "out of memory: limit 256 MB"."""
    from lis.agent.tools.observation import bash_observation
    from lis.sandbox import make_sandbox

    cfg = dataclasses.replace(base_config, backend=backend,
                              limits=dataclasses.replace(base_config.limits, memory_mb=256))
    with make_sandbox(cfg).start() as sb:
        r = sb.exec("python3 -c 'x = bytearray(600 << 20); print(len(x))'", timeout=60)
        assert r.exit_code == 137, r
        obs = bash_observation(r, timeout_s=60, max_output_bytes=1 << 20)
        assert "out of memory: limit 256 MB" in obs, obs
        r = sb.exec("echo fine")
        assert r.stdout == "fine\n" and r.reclaim_note is None, r  # counted once, not again


@pytest.mark.docker
def test_a_sandbox_killed_for_memory_says_so_and_the_call_is_in_the_steps(base_config, backend):
    """Quotas over the limit (a config that skipped params validation): filling them kills the
    supervisor itself. The error says "out of memory: limit 128 MB", not EOFError, and the call
    that did it is recorded in the episode's steps."""
    from lis.agent import AgentConfig, Trajectory, run_episode
    from lis.models.scripted import ScriptedModel, assistant, tool_call
    from lis.sandbox import make_sandbox

    fill = "for d in /testbed /tmp $HOME; do head -c 190M /dev/zero > $d/fill; done; echo survived"
    model = ScriptedModel([assistant(None, tool_call("execute_bash", {"command": "echo first"}, "c0")),
                           assistant("filling", tool_call("execute_bash", {"command": fill}, "c1"))])
    cfg = dataclasses.replace(base_config, backend=backend, command_timeout_s=60,
                              limits=dataclasses.replace(base_config.limits, memory_mb=128, testbed_mb=200,
                                                         tmp_mb=200, home_mb=200))
    rec = Trajectory(task_id="t", model="scripted", mode="sandbox")
    with make_sandbox(cfg).start() as sb:
        run_episode(model, sb, [{"role": "user", "content": "go"}], AgentConfig(max_turns=4), rec)
    assert rec.termination == "sandbox_error"
    assert "out of memory: limit 128 MB" in rec.error, rec.error
    assert [len(s.calls) for s in rec.steps] == [1, 1]
    fatal = rec.steps[1].calls[0]
    assert fatal.id == "c1" and fatal.tool == "execute_bash" and fatal.arguments == {"command": fill}
    assert fatal.error == "sandbox_error" and "out of memory: limit 128 MB" in fatal.observation


@pytest.mark.docker
def test_docker_keeps_no_log_of_what_a_sandbox_prints(base_config, docker_client):
    from lis.sandbox import make_sandbox

    with make_sandbox(dataclasses.replace(base_config, backend="docker")).start() as sb:
        sb.exec("head -c 1000000 /dev/zero | tr '\\0' x")
        log_config = docker_client.api.inspect_container(sb.id)["HostConfig"]["LogConfig"]
    assert log_config["Type"] == "none", log_config

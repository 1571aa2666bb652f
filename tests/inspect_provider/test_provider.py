"""What the ``lis`` provider promises beyond Inspect's self-check: exec independent of the agent's
shell, the one sandbox user, a missing program, the output cap, /var/tmp, the life cycle with
interruption and the label sweep, connection(), and configs that fail in one line."""
from __future__ import annotations

import time

import anyio
import pytest
from inspect_ai.util import OutputLimitExceededError
from inspect_ai.util._sandbox.environment import SandboxUnavailableError, SandboxUserUnsupportedError
from inspect_ai.util._sandbox.limits import override_max_exec_output_size

from lis.errors import LisError
from lis.inspect.config import LisSandboxConfig, parse_config
from lis.inspect.provider import LisSandboxEnvironment
from tests.inspect_provider.conftest import BACKENDS, inspect_containers, sample_sandbox

pytestmark = [pytest.mark.anyio, pytest.mark.docker]
TASK = "lis-provider-test"


@pytest.fixture(params=BACKENDS)
async def env(request):
    async with sample_sandbox(TASK, request.param) as sandbox:
        yield sandbox


async def test_exec_is_a_fresh_process_not_the_agents_shell(env):
    await anyio.to_thread.run_sync(env.sb.exec, "cd /tmp && export LIS_X=1")  # the persistent shell
    r = await env.exec(["sh", "-c", "pwd; echo ${LIS_X:-unset}"])
    assert r.stdout == "/testbed\nunset\n"


async def test_the_sandbox_user_by_name_or_uid_and_no_other(env):
    assert (await env.exec(["whoami"], user="sandbox")).stdout == "sandbox\n"
    assert (await env.exec(["id", "-u"], user="1000")).stdout == "1000\n"
    for other in ("root", "0", "nobody"):
        with pytest.raises(SandboxUserUnsupportedError, match="one user"):
            await env.exec(["whoami"], user=other)


async def test_a_missing_program_is_a_failed_result(env):
    r = await env.exec(["no-such-program-here", "x"])
    assert not r.success and r.returncode == 127 and "not found" in r.stderr


async def test_an_empty_command_is_refused_clearly(env):
    with pytest.raises(ValueError, match="the argument list is empty"):
        await env.exec([])
    assert (await env.exec(["true"])).success  # the sample goes on


async def test_a_timeout_also_ends_what_the_command_moved_out_of_its_session(env):
    """`setsid` / `nohup` children outlived a call's timeout: now every process the call started goes."""
    with pytest.raises(TimeoutError):
        await env.exec(["sh", "-c", "setsid sleep 300 & nohup setsid sh -c 'sleep 301' >/dev/null 2>&1 & sleep 60"],
                       timeout=2)
    left = (await env.exec(["sh", "-c", "ps -eo args | grep -c '^sleep 30[01]' || true"])).stdout.strip()
    assert left == "0", left
    # what ran before the call is not the call's: a background job of the agent's shell lives on
    await anyio.to_thread.run_sync(env.sb.exec, "sleep 302 >/dev/null 2>&1 &")
    with pytest.raises(TimeoutError):
        await env.exec(["sleep", "60"], timeout=1)
    assert (await env.exec(["sh", "-c", "ps -eo args | grep -c '^sleep 302' || true"])).stdout.strip() == "1"


async def test_output_past_the_limit_raises_inspects_error(env):
    with override_max_exec_output_size(4096):
        with pytest.raises(OutputLimitExceededError, match="limit of 4 KiB was exceeded"):
            await env.exec(["sh", "-c", "head -c 100000 /dev/zero; sleep 30"], timeout=20)
    assert (await env.exec(["echo", "alive"])).stdout == "alive\n"


async def test_output_up_to_inspects_10_mib_comes_back_whole(env):
    ten = 10 * 1024 * 1024
    r = await env.exec(["sh", "-c", f"head -c {ten} /dev/zero | tr '\\0' a; head -c {ten} /dev/zero | tr '\\0' b >&2"])
    assert r.success and len(r.stdout) == ten and len(r.stderr) == ten and set(r.stdout) == {"a"}
    with pytest.raises(OutputLimitExceededError, match="limit of 10 MiB was exceeded"):
        await env.exec(["head", "-c", str(ten + 1), "/dev/zero"])


async def test_var_tmp_is_a_world_writable_tmpfs(env):
    r = await env.exec(["sh", "-c", "stat -c %a /var/tmp; awk '$2==\"/var/tmp\"{print $3}' /proc/mounts; "
                                    "echo x > /var/tmp/f && cat /var/tmp/f"])
    assert r.stdout == "1777\ntmpfs\nx\n", r


async def test_concurrent_execs_on_one_sample_run_one_after_another(env):
    """sandboxd serves one request at a time (docs/inspect.md): two 1 s commands take 2 s."""
    t0 = time.monotonic()
    async with anyio.create_task_group() as tg:
        for _ in range(2):
            tg.start_soon(env.exec, ["sleep", "1"])
    assert time.monotonic() - t0 >= 2.0


async def test_connection_is_docker_exec_on_docker_only(env):
    if env.sb.config.backend == "docker":
        conn = await env.connection()
        assert conn.type == "lis" and conn.container == env.sb.id and conn.command.startswith("docker exec -it")
        from tests.conftest import run

        argv = conn.command.replace(" -it", "").replace(" bash -l", "").split() + ["whoami"]
        assert run(argv).stdout == "sandbox\n"
    else:
        with pytest.raises(NotImplementedError):
            await env.connection()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_life_cycle_with_an_interrupted_sample_leaves_nothing(backend):
    """As Inspect calls it: task_init("startup"), the samples under the task's own name, then
    task_cleanup("shutdown"): one pool for the config, closed at the end with its warm sandbox."""
    from lis.inspect.pools import open_pools

    cfg = LisSandboxConfig(backend=backend, warm=1)
    task = f"{TASK}-life-{backend}"
    before = open_pools()
    await LisSandboxEnvironment.task_init("startup", cfg)
    envs = await LisSandboxEnvironment.sample_init(task, cfg, {})
    assert open_pools() == before + 1  # the samples use the pool task_init opened
    sb = envs["default"].sb
    raised = []

    async def call():
        try:
            await envs["default"].exec(["sleep", "60"])
        except SandboxUnavailableError as e:
            raised.append(e)

    async with anyio.create_task_group() as tg:  # a call in progress when the sample is interrupted
        tg.start_soon(call)
        await anyio.sleep(1)
        t0 = time.monotonic()
        await LisSandboxEnvironment.sample_cleanup(task, cfg, envs, True)
    assert time.monotonic() - t0 < 15 and sb.closed
    assert raised and "went away" in str(raised[0])  # the call ends at once, as the sandbox is gone
    await LisSandboxEnvironment.task_cleanup("shutdown", cfg, True)
    assert open_pools() == before
    assert inspect_containers() == [], "warm or interrupted sandboxes left behind"


async def test_cli_cleanup_removes_the_providers_containers():
    cfg = LisSandboxConfig(backend="docker")
    envs = await LisSandboxEnvironment.sample_init(TASK, cfg, {})
    name = envs["default"].sb.id
    try:
        await LisSandboxEnvironment.cli_cleanup(name)
        assert name not in [c["Names"][0].lstrip("/") for c in inspect_containers()]
    finally:
        await LisSandboxEnvironment.sample_cleanup(TASK, cfg, envs, True)


def test_default_concurrency_is_the_pools(params):
    assert LisSandboxEnvironment.default_concurrency() == params.section("sandbox")["pool"]["max_concurrent"]


@pytest.mark.parametrize("config, says", [
    ("lis-nonsense", "neither docker, bwrap nor a file"),
    ({"backend": "podman"}, "backend"),
    ({"limits": {"memory_gb": 1}}, "unknown limit(s) memory_gb"),
    ({"limits": {"memory_mb": 512}}, "exceed memory_mb 512"),
    ({"colour": "blue"}, "colour"),
])
def test_bad_configs_fail_in_one_line(config, says, tmp_path):
    with pytest.raises(LisError) as e:
        cfg = parse_config(config)
        from lis.inspect.config import sandbox_config

        sandbox_config(cfg, "x")
    line = e.value.one_line()
    assert says in line and "\n" not in line, line


def test_a_config_file_and_config_deserialize(tmp_path):
    f = tmp_path / "lis.yaml"
    f.write_text("backend: bwrap\nnetwork: none\nlimits: {memory_mb: 1024, testbed_mb: 256, tmp_mb: 128, home_mb: 128}\n")
    cfg = parse_config(str(f))
    assert cfg.backend == "bwrap" and cfg.limits["memory_mb"] == 1024
    assert LisSandboxEnvironment.config_deserialize(cfg.model_dump()) == cfg
    with pytest.raises(Exception):
        cfg.backend = "docker"  # frozen

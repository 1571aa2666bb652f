"""Ctrl-C in the middle of ``inspect eval lis/math``: SIGINT to the process group while every sample's
sandbox runs a long command; within 10 s the eval has ended and no lis sandbox is left."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from lis.models.scripted import assistant, tool_call
from lis.models.server import ChatServer
from tests.conftest import BIN, ROOT, run
from tests.inspect_provider.conftest import inspect_containers
from tests.inspect_tasks.conftest import inspect_env, lis_containers
from tests.inspect_tasks.replay import ReplayModel, bash
from tests.wait import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_sigint_mid_run_leaves_no_sandbox(math_project, tmp_path):
    from lis.tasks import read_tasks

    tasks = read_tasks(math_project / "data/tasks/math.jsonl")
    scripts = {t.problem_statement[:60]: [assistant(None, bash("echo started; sleep 90", f"s{i}")),
                                          assistant(None, tool_call("submit", {}, f"d{i}"))]
               for i, t in enumerate(tasks)}
    model = ReplayModel(scripts)
    def provider_containers() -> set[str]:  # the eval's sandboxes (the provider labels its runs inspect-…)
        return {c["Id"][:12] for c in inspect_containers()}

    before = provider_containers()
    with ChatServer(model) as srv:
        # Ctrl-C in a terminal reaches a process whose SIGINT is at its default. A suite started as a
        # background job (`cmd &` in a script: SIGINT ignored) hands its children an ignored SIGINT, and
        # `inspect eval` would never see the interrupt. A signal this process *catches* is reset to the
        # default in the child at exec, so catch it while starting the child.
        prev = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            proc = subprocess.Popen(
                [str(BIN / "inspect"), "eval", "lis/math", "--model", "openai-api/replay/replay", "-T", "mode=sandbox",
                 "-T", "profile=ci", "-T", f"params={math_project}",
                 "-T", f"tasks_file={math_project / 'data/tasks/math.jsonl'}", "--log-dir", str(tmp_path / "logs"),
                 "--display", "plain"],
                cwd=ROOT, env={**os.environ, **inspect_env(srv.base_url), "PATH": f"{BIN}:{os.environ['PATH']}",
                               "PYTHONFAULTHANDLER": "1"},  # SIGABRT below dumps every thread's stack
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            signal.signal(signal.SIGINT, prev)
        ended, left = None, set()

        def sleeping() -> bool:  # the samples' commands are running: `sleep 90` in two sandboxes
            from lis.sandbox.engine import connect

            api = connect().api
            return sum(any("sleep 90" in " ".join(row) for row in api.top(c)["Processes"] or [])
                       for c in provider_containers() - before) >= 2

        def gone() -> bool:  # the eval has ended and no sandbox is left (looked at for 10 s after SIGINT)
            nonlocal ended, left
            ended = proc.poll()
            left = (provider_containers() - before) | set(lis_containers())
            return ended is not None and not left

        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # mid-run: the ci profile's 2 sandboxes are busy with `sleep 90`
                busy = {marker for marker, turn, _ in list(model.calls) if turn == 0}  # the third sample waits
                if len(busy) >= 2 and len(provider_containers() - before) >= 2:
                    break
                assert proc.poll() is None, proc.stdout.read().decode()[-3000:]
                time.sleep(0.2)
            else:
                raise AssertionError("the samples never got busy")
            wait_until(sleeping, 30, "`sleep 90` running in the busy sandboxes", interval=0.2)
            running = provider_containers() - before
            assert running, "no sandbox was running at the interrupt"
            os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends to a terminal's foreground group
            wait_until(gone, 10, "the eval gone with its sandboxes", interval=0.2, fail=False)
        finally:
            if proc.poll() is None:  # still running: where is it stuck? (faulthandler prints every thread)
                os.kill(proc.pid, signal.SIGABRT)
                time.sleep(2)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            output = proc.communicate(timeout=60)[0].decode(errors="replace")
            if ended is None:  # killed: nothing of it could clean up; the orphans go, as `lis sandbox cleanup` does
                run(["lis", "sandbox", "cleanup"], check=False)
    assert ended is not None, f"inspect eval still running 10 s after SIGINT (its threads' stacks last):\n{output[-12000:]}"
    assert not left, f"containers left 10 s after SIGINT: {sorted(left)}\n{output[-3000:]}"
    from inspect_ai.log import read_eval_log

    (log,) = (tmp_path / "logs").glob("*.eval")
    assert read_eval_log(str(log), header_only=True).status == "cancelled", output[-3000:]

"""Hostile commands must be contained: the host and the harness unharmed, the next command and
the next sandbox working. Run against every backend."""
from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.docker


def still_fine(sb, make):
    """The same sandbox answers, and a brand-new one works too."""
    assert sb.exec("echo ok", timeout=20).stdout.endswith("ok\n")
    fresh = make()
    assert fresh.exec("echo fresh").stdout == "fresh\n"


def count_processes(sb) -> int:
    return int(sb.exec("ps -e --no-headers | wc -l", timeout=20).stdout.split()[-1])


def test_fork_bomb_in_the_background(sb, make):
    r = sb.exec(":(){ :|:& };:", timeout=3)  # backgrounds itself: returns at once
    assert r.exit_code is not None
    time.sleep(2)
    assert sb.exec("echo builtin-ok", timeout=20).stdout == "builtin-ok\n"  # the shell still answers
    sb.restart_shell()  # the harness's recovery: as PID 1, sandboxd kills every other process
    assert count_processes(sb) < 10
    still_fine(sb, make)


def test_fork_bomb_in_the_foreground(sb, make):
    t0 = time.monotonic()
    r = sb.exec(":(){ :|: ; };:", timeout=3)
    assert r.timed_out or r.exit_code != 0
    assert time.monotonic() - t0 < 30
    assert count_processes(sb) < 10
    still_fine(sb, make)


HOGS = {  # ways to use up the pids limit (128 in these tests) and stay alive in the background
    "fork_bomb": ":(){ :|:& };:",
    "sleepers": "python3 -c \"import os, time\nwhile True:\n    try:\n        if os.fork() == 0:\n"
                "            time.sleep(600); os._exit(0)\n    except OSError:\n        time.sleep(0.05)\" &",
}


def run_as_agent(sb, command):
    """The agent's path: an execute_bash tool call and the observation the model reads."""
    from lis.agent.tools.dispatch import ToolSettings, execute_tool_call

    return execute_tool_call(sb, "execute_bash", {"command": command}, ToolSettings(command_timeout_s=20))


@pytest.mark.parametrize("hog", sorted(HOGS))
def test_exhausted_pids_limit_is_reclaimed_for_the_next_command(sb, make, hog):
    sb.exec(HOGS[hog], timeout=5)
    time.sleep(2)  # the limit is full (the bomb saturates within ~0.1 s); its processes stay alive
    out = run_as_agent(sb, "/bin/echo alive")  # needs a process of its own: it could not start
    assert out.exit_code == 0 and "[STDOUT]\nalive\n" in out.observation, out.observation
    assert "[sandbox] the process limit (pids 128) was exhausted: killed " in out.observation
    assert "then ran this command" in out.observation
    r = sb.exec("ps -e --no-headers | wc -l", timeout=20)
    assert r.exit_code == 0 and int(r.stdout) < 10 and r.reclaimed == 0 and r.reclaim_note is None
    still_fine(sb, make)


def test_reclaim_reports_what_it_killed(sb):
    sb.exec(HOGS["sleepers"], timeout=5)
    time.sleep(1)
    r = sb.exec("ls -d /testbed", timeout=20)
    assert r.exit_code == 0 and r.stdout == "/testbed\n" and r.shell_restarted, r
    assert 100 < r.reclaimed <= 128 and f"killed {r.reclaimed} processes" in r.reclaim_note


def test_pids_limit_exhausted_during_a_command_is_reclaimed_after_it(sb):
    sb.exec(f"(sleep 1; {HOGS['sleepers'][:-2]}) &")  # fills the limit 1 s from now, while the next command runs
    # waits in a builtin (an exiting `sleep` would free a slot for the echo), then cannot start the echo:
    # bash retries the fork until the timeout
    r = sb.exec("mkfifo /tmp/wait && read -t 3 <> /tmp/wait; /bin/echo late", timeout=5)
    assert "late" not in r.stdout and r.shell_restarted and 100 < r.reclaimed <= 128, r
    assert r.reclaim_note.startswith("[sandbox] the process limit (pids 128) was exhausted while this command ran")
    assert "run it again" in r.reclaim_note
    r = sb.exec("/bin/echo again", timeout=20)
    assert r.stdout == "again\n" and r.reclaimed == 0 and not r.shell_restarted


def test_without_a_cgroup_bwrap_caps_processes_by_rlimit_and_reclaims(base_config, monkeypatch):
    """A machine where no cgroup is writable (forced here: this one has one): RLIMIT_NPROC is the
    limit, and the reclaim names it. The hog stops by itself at the limit, so the test is safe
    where the kernel does not enforce RLIMIT_NPROC (bwrap run by root maps the sandbox user to
    host root, which the kernel exempts)."""
    import dataclasses

    from lis.sandbox.cgroups import Cgroup
    from lis.sandbox import make_sandbox

    monkeypatch.setattr(Cgroup, "available", staticmethod(lambda: ""))
    with make_sandbox(dataclasses.replace(base_config, backend="bwrap")).start() as sb:
        assert sb.info["limits"] == "rlimits (no writable cgroup)"
        assert sb.exec("ulimit -u").stdout == "128\n"
        sb.exec("python3 -c \"import os, time\nfor _ in range(130):\n    try:\n        if os.fork() == 0:\n"
                "            time.sleep(600); os._exit(0)\n    except OSError:\n        break\ntime.sleep(600)\" &")
        time.sleep(1)
        r = sb.exec("/bin/echo alive", timeout=20)
        assert r.stdout == "alive\n" and r.exit_code == 0 and 100 < r.reclaimed, r
        assert r.reclaim_note.startswith("[sandbox] the process limit (RLIMIT_NPROC 128) was exhausted: killed ")


def test_fork_trouble_in_the_output_of_a_healthy_sandbox_is_no_reclaim(sb):
    sb.exec("cd /tmp; sleep 300 &")
    sb.exec("python3 -c \"import os, time\nfor _ in range(70):\n    if os.fork() == 0:\n        time.sleep(600); os._exit(0)\" &")
    # the forks happen in the background: wait for all 70 (a loaded machine is slow to make them; their parent
    # has exited, so 70 processes match)
    sb.exec("for i in $(seq 300); do [ $(pgrep -c -f 'import os, time') -ge 70 ] && break; sleep 0.1; done", timeout=40)
    r = sb.exec("echo 'bash: fork: retry: Resource temporarily unavailable' >&2; echo 'sh: 1: Cannot fork'; "
                "python3 -c 'raise BlockingIOError(11, \"Resource temporarily unavailable\")'", timeout=20)
    assert r.exit_code == 1 and "Resource temporarily unavailable" in r.stderr
    for r in (r, sb.exec("/bin/echo alive; pwd; pgrep -c sleep", timeout=20)):
        assert r.reclaimed == 0 and r.reclaim_note is None and not r.shell_restarted, r
    assert r.stdout.split() == ["alive", "/tmp", "1"] and count_processes(sb) > 70  # nothing was killed


def test_pids_limit_caps_forking(sb):
    r = sb.exec("python3 -c \"import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
                "            time.sleep(60); os._exit(0)\n        n += 1\nexcept OSError as e:\n    print('stopped', n, e.errno)\"",
                timeout=30)
    words = r.stdout.split()
    assert words[0] == "stopped" and int(words[1]) < 128 and words[2] == "11", r  # EAGAIN below the pids limit
    sb.restart_shell()
    assert count_processes(sb) < 10


def test_memory_hog(make):
    sb = make(limits={"memory_mb": 256})
    r = sb.exec("python3 -c \"b = bytearray(1 << 30); print('survived')\"", timeout=30)
    assert r.exit_code != 0 and "survived" not in r.stdout  # killed (137) or MemoryError
    assert sb.exec("echo ok").stdout == "ok\n"


def test_endless_output(sb, make):
    t0 = time.monotonic()
    r = sb.exec("yes 'all work and no play'", timeout=60)
    assert r.output_limited and not r.timed_out
    assert time.monotonic() - t0 < 10
    still_fine(sb, make)


def test_endless_output_on_stderr_with_no_newlines(sb):
    r = sb.exec("python3 -c \"import sys\nwhile True: sys.stderr.write('x' * 65536)\"", timeout=60)
    assert r.output_limited and len(r.stderr) <= (1 << 20) + (1 << 16) + 4096


def test_sleep_forever(sb, make):
    t0 = time.monotonic()
    r = sb.exec("sleep 100000", timeout=2)
    assert r.timed_out and time.monotonic() - t0 < 10
    still_fine(sb, make)


@pytest.mark.parametrize("where", ["/testbed", "/tmp", "/home/sandbox"])
def test_disk_quota(sb, where):
    r = sb.exec(f"dd if=/dev/zero of={where}/fill bs=1M count=500 2>&1; echo rc=$?", timeout=60)
    assert "No space left on device" in r.stdout and "rc=1" in r.stdout
    assert sb.exec(f"rm -f {where}/fill && echo freed").stdout == "freed\n"


def test_nothing_else_is_writable(sb):
    r = sb.exec("for d in / /usr /etc /var /opt /root; do touch $d/x 2>/dev/null && echo wrote $d; done; echo done")
    assert r.stdout == "done\n"


def test_kill_everything(sb, make):
    sb.exec("cd /tmp; sleep 300 & sleep 300 &")
    r = sb.exec("kill -9 -1; echo shell-survives", timeout=10)  # the builtin spares its caller, as anywhere
    assert r.stdout == "shell-survives\n"
    # SIGKILL is delivered asynchronously and bash reaps its jobs on SIGCHLD: wait (bounded) until no live
    # `sleep 300` is left; a zombie is dead, so it does not count.
    left = sb.exec("for i in $(seq 50); do n=$(ps -e -o stat=,args= | awk '$1 !~ /^Z/ && $2 == \"sleep\" && $3 == 300' | wc -l); "
                   "[ \"$n\" = 0 ] && break; sleep 0.1; done; echo $n", timeout=20)
    assert left.stdout.strip() == "0"
    r = sb.exec("python3 -c 'import os; os.kill(-1, 9)'; echo unreachable", timeout=10)  # kills the shell too
    assert r.shell_restarted and "unreachable" not in r.stdout
    assert sb.exec("echo ok; pwd").stdout == "ok\n/testbed\n"
    assert sb.info["pid"] == 1 and sb.ping()  # the supervisor is PID 1: out of reach
    still_fine(sb, make)


def test_no_network_under_policy_none(sb):
    r = sb.exec("curl -sS -m 5 http://deb.debian.org/ 2>&1; python3 -c \"import socket; "
                "socket.create_connection(('1.1.1.1', 53), timeout=3)\" 2>&1 | tail -1", timeout=30)
    assert "Could not resolve host" in r.stdout or "Failed to connect" in r.stdout
    assert "Network is unreachable" in r.stdout or "Errno" in r.stdout
    r = sb.exec("cat /proc/net/dev | grep -v -E 'lo:|Inter|face' | wc -l")
    assert r.stdout.strip() == "0"  # no interface but loopback


def test_no_docker_socket_anywhere(sb):
    r = sb.exec("ls -la /var/run/docker.sock /run/docker.sock 2>&1; find / -xdev -name 'docker.sock' 2>/dev/null | head; "
                "curl -sS --unix-socket /var/run/docker.sock http://x/version 2>&1 | head -1", timeout=60)
    assert "No such file" in r.stdout and "\"ApiVersion\"" not in r.stdout


def test_no_privilege_escalation(sb):
    r = sb.exec("su -c id root </dev/null 2>&1; python3 -c 'import os; os.setuid(0)' 2>&1 | tail -1; id -u")
    assert r.stdout.strip().endswith("1000") and "uid=0" not in r.stdout
    # EPERM under Docker; EINVAL under bubblewrap (uid 0 does not exist in the user namespace)
    assert "Operation not permitted" in r.stdout or "Invalid argument" in r.stdout


def test_supervisor_cannot_be_forged_or_killed(sb):
    r = sb.exec("echo '{\"ok\": true}' > /proc/1/fd/1 2>&1; cat /proc/1/environ > /dev/null 2>&1 && echo read; "
                "kill -9 1 2>&1; echo tried")
    assert "read" not in r.stdout.split()
    assert sb.exec("echo still").stdout == "still\n"


def test_the_agent_cannot_end_the_sandbox_by_signalling_its_supervisor(sb):
    """Every signal the agent can send to PID 1 (sandboxd, the same user) leaves it running: the answer already
    written is still read (a SIGTERM handler that exited used to lose it)."""
    r = sb.exec("echo 42 > /testbed/answer.txt; for s in TERM INT HUP QUIT USR1 USR2 ALRM PIPE KILL STOP CONT; do "
                "kill -$s 1 && echo sent-$s; done; sleep 0.3; grep -E '^State' /proc/1/status")
    assert r.exit_code == 0 and "sent-TERM" in r.stdout and "sent-KILL" in r.stdout, r
    assert "stopped" not in r.stdout.lower().split("state:")[-1], r.stdout
    assert sb.exec("echo still").stdout == "still\n"
    assert sb.read_file("/testbed/answer.txt") == b"42\n"


def test_runaway_background_job_does_not_block_the_next_command(sb):
    sb.exec("(while :; do echo spam; sleep 0.01; done) > /dev/null 2>&1 &")
    t0 = time.monotonic()
    assert sb.exec("echo quick").stdout == "quick\n"
    assert time.monotonic() - t0 < 2


def test_no_user_namespaces(sb):
    """`unshare -r` would make the sandbox user root of a new user namespace (the kernel surface many
    local privilege escalations start from): refused on both backends."""
    r = sb.exec("unshare -r id", timeout=20)
    assert r.exit_code != 0 and "uid=0" not in r.stdout, (r.stdout, r.stderr)
    r = sb.exec("python3 -c 'import os; os.unshare(os.CLONE_NEWUSER)' && echo made", timeout=20)
    assert r.exit_code != 0 and "made" not in r.stdout, (r.stdout, r.stderr)


def test_root_only_files_are_unreadable(sb):
    """What only root may read in the image stays unreadable: a root-only file and folder."""
    r = sb.exec("cat /etc/shadow", timeout=20)
    assert r.exit_code != 0 and "Permission denied" in r.stderr and "root:" not in r.stdout, (r.stdout, r.stderr)
    r = sb.exec("ls /root", timeout=20)
    assert r.exit_code != 0 and "Permission denied" in r.stderr, (r.stdout, r.stderr)
    assert sb.exec("head -1 /etc/passwd", timeout=20).stdout.startswith("root:")  # what others may read, they read


PROBE = r"""
import ctypes, errno, json
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
calls = {"io_uring_setup": (425, 1, ctypes.addressof(buf)), "keyctl": (250, 0, 0), "add_key": (248, 0, 0),
         "request_key": (249, 0, 0), "bpf": (321, 0, 0), "perf_event_open": (298, 0, 0), "userfaultfd": (323, 0, 0),
         "unshare(CLONE_NEWUSER)": (272, 0x10000000, 0), "setns": (308, 0, 0)}
out = {}
for name, (nr, a, b) in calls.items():
    r = libc.syscall(nr, ctypes.c_long(a), ctypes.c_long(b), 0, 0, 0)
    out[name] = "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
print(json.dumps(out))
"""


def test_the_seccomp_filter_refuses_the_kernels_riskier_calls(sb):
    """lis's filter (lis/sandbox/seccomp.py) on both backends: io_uring, the keyring, bpf, perf events,
    userfaultfd and namespaces fail with EPERM (x86_64 numbers; the suite runs there)."""
    import json
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("the probe's syscall numbers are x86_64's")
    sb.write_file("/tmp/probe.py", PROBE)
    r = sb.exec("python3 /tmp/probe.py")
    assert r.exit_code == 0, r
    assert json.loads(r.stdout) == {name: "EPERM" for name in json.loads(r.stdout)} and len(json.loads(r.stdout)) == 9
    assert "Operation not permitted" in sb.exec("unshare -U true 2>&1").stdout


def test_the_agents_usual_work_runs_under_the_filter(sb):
    """What an agent does all day still works: Python with threads and processes, a venv with pip, git, sqlite,
    shell pipelines and background jobs."""
    script = ("set -e; cd /tmp; python3 -c 'import concurrent.futures as f, multiprocessing as m; "
              "print(sum(f.ThreadPoolExecutor(4).map(abs, [-1, -2])), m.Pool(2).map(abs, [-3])[0])'; "
              "python3 -m venv v && v/bin/python -m pip --version | cut -d' ' -f1; "
              "git init -q r && cd r && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && "
              "git log --oneline | wc -l; cd ..; python3 -c 'import sqlite3; print(sqlite3.connect(\":memory:\")"
              ".execute(\"select 6*7\").fetchone()[0])'; (sleep 0.1; echo bg) & wait; seq 5 | sort -r | head -1")
    r = sb.exec(script, timeout=120)
    assert r.exit_code == 0, r
    assert r.stdout.split() == ["3", "3", "pip", "1", "42", "bg", "5"], r.stdout

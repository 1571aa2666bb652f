"""The observation format of the paper's package, and our caps."""
from __future__ import annotations

from lis.agent.tools.observation import DIVIDER, TRUNCATED, bash_observation, clip, truncate_lines
from lis.sandbox import ExecResult


def obs(**kw):
    r = ExecResult(**{"stdout": "", "stderr": "", "exit_code": 0, **kw})
    return bash_observation(r, timeout_s=120, max_output_bytes=16 << 20)


def test_success_layout():
    assert obs(stdout="hi\n") == "Exit code: 0\nExecution output of [execute_bash]:\n[STDOUT]\nhi"


def test_failure_and_stderr_section():
    o = obs(stdout="", stderr="boom\n", exit_code=2)
    assert o.splitlines()[0] == "Exit code: Error: Exit code 2"
    assert o.endswith("[STDERR]\nboom")
    assert "[STDERR]" not in obs(stdout="x")


def test_eighty_lines_pass_whole_eighty_one_are_cut():
    text = "".join(f"{i}\n" for i in range(80))
    assert truncate_lines(text) == text
    text = "".join(f"{i}\n" for i in range(81))
    lines = truncate_lines(text).splitlines()
    assert lines[:40] == [str(i) for i in range(40)] and lines[-40:] == [str(i) for i in range(41, 81)]
    assert lines[40:43] == [DIVIDER, TRUNCATED, DIVIDER]


def test_one_huge_line_is_capped():
    o = obs(stdout="x" * 10_000_000)
    assert len(o) < 21000 and "characters truncated" in o
    # the count is what was cut: 10,000,000 less the 2 × 10,000 kept (max_chars 20,000)
    assert "\n<... 9980000 characters truncated ...>\n" in o
    body = obs(stdout="x" * 20_001).split("[STDOUT]\n")[1]
    assert body.count("x") == 20_000 and "<... 1 characters truncated ...>" in body


def test_timeout_names_the_limit():
    o = obs(stdout="partial\n", exit_code=None, timed_out=True, reason="timeout")
    assert o.startswith("Exit code: -1") and "(>120s)" in o and "per-command time limit" in o and "partial" in o
    # what sandboxd answers for a command it stopped at its time limit: killed by SIGKILL, exit 128 + 9
    o = obs(stdout="partial\n", exit_code=137, timed_out=True, reason="timeout")
    assert o.startswith("Exit code: -1\n") and "per-command time limit" in o


def test_output_limit_and_restart_are_announced():
    o = obs(stdout="y\n" * 10, exit_code=137, output_limited=True, shell_restarted=True)
    assert "per-command output limit" in o and "The shell was restarted" in o


def test_reclaimed_process_limit_is_announced():
    note = ("[sandbox] the process limit (pids 128) was exhausted: killed 127 processes left running by earlier "
            "commands, restarted the shell, then ran this command")
    o = obs(stdout="alive\n", shell_restarted=True, reclaimed=127, reclaim_note=note)
    assert o.startswith("Exit code: 0") and "[STDOUT]\nalive\n" + note in o and "The shell was restarted" in o
    assert "[sandbox]" not in obs(stdout="alive\n")


def test_clip_keeps_short_text():
    assert clip("a\nb\n") == "a\nb\n"

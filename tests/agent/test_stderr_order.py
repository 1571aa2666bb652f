"""lis.agent.tools.stderr_order: in the deterministic mode, the error output of programs that ran at
once comes in one order, whichever the kernel's scheduler chose (docs/training.md, "Determinism")."""
from __future__ import annotations

import pytest

from lis.agent.tools.dispatch import ToolSettings, execute_tool_call
from lis.agent.tools.stderr_order import by_program, programs_at_once

COMMAND = "grep -n -i -m 3 river /testbed/documents/nororholm.txt | cut -m 3 1-20 | head -n 10"
GREP = "grep: /testbed/documents/nororholm.txt: No such file or directory"
CUT = "cut: invalid option -- 'm'\nTry 'cut --help' for more information."


def test_both_orders_of_the_run_that_parted_give_one_observation():
    """The two forms of the observation that made two deterministic GRPO runs part (2026-11-28)."""
    grep_first, cut_first = f"{GREP}\n{CUT}\n", f"{CUT}\n{GREP}\n"
    assert by_program(COMMAND, grep_first) == by_program(COMMAND, cut_first) == grep_first
    assert programs_at_once(COMMAND, cut_first) == ["cut", "grep"]


def test_a_program_keeps_its_own_order_and_its_continuation_lines():
    stderr = "sort: cannot read: b\npython3: can't open file 'a.py'\nsort: second\n  more of sort's\n"
    assert by_program("python3 a.py & sort b", stderr) == \
        "python3: can't open file 'a.py'\nsort: cannot read: b\nsort: second\n  more of sort's\n"


@pytest.mark.parametrize("command, stderr", [
    ("grep a x && cut -m 1 y", f"{CUT}\n{GREP}"),          # one after another: the order is the command's
    ("grep a x 2>&1 >/dev/null", f"{CUT}\n{GREP}"),        # a redirection, not a background job
    ("grep a x y | head", "grep: y: no\ngrep: x: no"),     # one program
    ("python3 a.py | head", "Traceback (most recent call last):\nZeroDivisionError: division by zero"),
    ("ls | sort", f"{CUT}\n{GREP}"),                       # messages of programs the command does not name
])
def test_anything_else_is_left_as_it_was(command, stderr):
    assert by_program(command, stderr) == stderr


def test_lines_before_any_program_message_stay_first():
    stderr = "warning from the shell\ncut: bad\ngrep: bad\n"
    assert by_program("grep a | cut -x", stderr) == "warning from the shell\ngrep: bad\ncut: bad\n"


@pytest.mark.docker
def test_in_a_real_sandbox_the_order_the_programs_wrote_in_no_longer_matters(sb):
    """Two pipelines whose programs write their errors in opposite orders (sleeps force each order):
    as written they differ, in the deterministic mode the observations are one."""
    late_cut = "grep -q river /nonexistent | { sleep 0.3; cut -m 3 /dev/null; }"
    late_grep = "{ sleep 0.3; grep -q river /nonexistent; } | cut -m 3 /dev/null"
    plain, ordered = ToolSettings(command_timeout_s=30), ToolSettings(command_timeout_s=30, stderr_by_program=True)

    def obs(command, settings):
        return execute_tool_call(sb, "execute_bash", {"command": command}, settings).observation

    def stderr(observation):
        return observation.partition("[STDERR]\n")[2]

    a, b = stderr(obs(late_cut, plain)), stderr(obs(late_grep, plain))
    assert a.startswith("grep: ") and b.startswith("cut: "), (a, b)  # the scheduler's two orders, as written
    a, b = stderr(obs(late_cut, ordered)), stderr(obs(late_grep, ordered))
    assert a.startswith("grep: ") and b.startswith("grep: ") and sorted(a.split("\n")) == sorted(b.split("\n")), (a, b)

"""lis.agent.tools.stderr_order: in the deterministic mode, the error output of programs that ran at
once comes in one order, whichever the kernel's scheduler chose (docs/training.md, "Determinism")."""
from __future__ import annotations

import pytest

from lis.agent.tools.dispatch import ToolSettings, execute_tool_call
from lis.agent.tools.stderr_order import by_program, cannot_order, programs_at_once

COMMAND = "grep -n -i -m 3 river /testbed/documents/nororholm.txt | cut -m 3 1-20 | head -n 10"
GREP = "grep: /testbed/documents/nororholm.txt: No such file or directory"
CUT = "cut: invalid option -- 'm'\nTry 'cut --help' for more information."


def test_both_orders_of_the_run_that_parted_give_one_observation():
    """The two forms of the observation that made two deterministic GRPO runs part (2026-11-28)."""
    grep_first, cut_first = f"{GREP}\n{CUT}\n", f"{CUT}\n{GREP}\n"
    assert by_program(COMMAND, grep_first) == by_program(COMMAND, cut_first) == grep_first
    assert programs_at_once(COMMAND, cut_first) == ["cut", "grep"]


def test_a_usage_line_is_its_programs_wherever_the_scheduler_put_it():
    """The same run's step 2 under load (2026-11-28, two busy loops beside the GRPO stage): cut's first line,
    then grep's, then cut's ``Try`` line. Read as a continuation, the ``Try`` line went with grep's message;
    it names cut, so it is cut's."""
    interleaved = f"cut: invalid option -- 'm'\n{GREP}\nTry 'cut --help' for more information.\n"
    assert by_program(COMMAND, interleaved) == f"{GREP}\n{CUT}\n"
    assert by_program("grep -x a | sort -q", "Usage: sort [OPTION]... [FILE]...\ngrep: bad\n") == \
        "grep: bad\nUsage: sort [OPTION]... [FILE]...\n"


def test_the_shells_message_about_a_process_is_that_processs():
    """Step 6 of the runs under load, once lines were written whole: bash's message about the pipeline's
    second process and grep's, in either order."""
    command = "grep -i 'city' /testbed/documents/marbrook.txt | ead -n 5"
    shell, grep = "main: line 2: ead: command not found", "grep: /testbed/documents/marbrook.txt: No such file or directory"
    assert by_program(command, f"{shell}\n{grep}\n") == by_program(command, f"{grep}\n{shell}\n") == f"{grep}\n{shell}\n"
    assert programs_at_once(command, f"{shell}\n{grep}\n") == ["ead", "grep"]


SAME_NAME = "grep -n -i -m m 3 'founded' /testbed/documents/* | grep"
GREP_DIES = "grep: invalid max count"
GREP_USAGE = "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information."


def test_two_processes_of_one_program_get_one_order():
    """Step 6 of the same runs: the two greps of one pipeline wrote in either order (the second grep has no
    pattern: its usage), and the shell's syntax error on the command's third line came after both. Every
    order the scheduler can choose gives the one observation: grep's message, its usage, its ``Try`` line,
    then the shell's lines where they were."""
    shell = ("main: eval: line 3: syntax error near unexpected token `a'\n"
             "main: eval: line 3: `print(a '[.txt | grep -h -9][0-9]+([0-9]+)?' > /testbed/answer.txt'")
    command = SAME_NAME + "\nprint(a '[.txt | grep -h -9][0-9]+([0-9]+)?' > /testbed/answer.txt"
    usage, try_ = GREP_USAGE.split("\n")
    orders = [(GREP_DIES, usage, try_), (usage, GREP_DIES, try_), (usage, try_, GREP_DIES)]
    seen = {by_program(command, "\n".join(order) + f"\n{shell}\n") for order in orders}
    assert seen == {f"{GREP_DIES}\n{GREP_USAGE}\n{shell}\n"}
    assert not any(cannot_order(command, "\n".join(order) + f"\n{shell}\n") for order in orders)
    assert programs_at_once(SAME_NAME, f"{GREP_USAGE}\n{GREP_DIES}\n") == ["grep"]
    assert programs_at_once("grep -m m x y | head", f"{GREP_DIES}\n") == []  # one grep: its own order
    assert by_program("grep a x y | head", "grep: y: no\ngrep: x: no\n") == "grep: y: no\ngrep: x: no\n"


def test_nothing_moves_across_the_shells_own_messages():
    """The shell writes its own message once the lines before it have run: what came before stays before."""
    stderr = "cut: b\nmain: eval: line 2: syntax error\ngrep: a\ncut: c\n"
    assert by_program("grep a x | cut -x\ngrep a y | cut -y", stderr) == \
        "cut: b\nmain: eval: line 2: syntax error\ngrep: a\ncut: c\n"


def test_what_cannot_be_ordered_is_reported():
    """A message of a program named twice with a line after it that names no program: which grep wrote that
    line is the scheduler's."""
    command = "grep -P x a | grep -P y"
    stderr = "grep: warning: x\n  more of a grep's\ngrep: y\n"
    assert cannot_order(command, stderr)
    assert not cannot_order("grep -P x a | head", stderr)  # one process: its own order
    assert not cannot_order("grep -P x a; grep -P y b", stderr)  # one after another


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


@pytest.mark.docker
def test_in_the_deterministic_sandbox_every_program_writes_its_stderr_lines_whole(base_config):
    """The mode's shell runs with coreutils' stdbuf preloaded (stderr line-buffered): the library is in the
    image (no loader warning in any output), every process the shell starts gets it, and a program's bytes
    are what they were. Without it, under load, one program's line landed inside another's (2026-11-28:
    ``grep: Try 'cut --help' for more information.`` then the rest of grep's line)."""
    import dataclasses

    from lis.sandbox import make_sandbox
    from lis.sandbox.base import LINE_BUFFERED_STDERR

    config = dataclasses.replace(base_config, env={**base_config.env, **LINE_BUFFERED_STDERR})
    box = make_sandbox(config).start()
    try:
        r = box.exec("grep -q river /nonexistent | cut -m 3 /dev/null; echo \"$_STDBUF_E\"; "
                     "sh -c 'tr \\0 \\n < /proc/$$/environ' | grep -c '^LD_PRELOAD=.*libstdbuf'", timeout=30)
    finally:
        box.close()
    assert r.stdout.split() == ["L", "1"], r  # the shell's setting, and a grandchild process has the library
    lines = sorted(r.stderr.splitlines())
    assert lines == ["Try 'cut --help' for more information.", "cut: invalid option -- 'm'",
                     "grep: /nonexistent: No such file or directory"], r.stderr  # no ld.so warning, no cut line

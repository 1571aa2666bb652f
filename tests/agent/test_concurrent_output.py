"""lis.agent.trajectory.concurrent_output: the observations whose order the kernel's scheduler chose
(the deterministic mode reports them; docs/training.md, "Determinism")."""
from __future__ import annotations

from lis.agent import Step, Trajectory
from lis.agent.trajectory import ToolCallRecord, concurrent_output

# The observation that made two deterministic GRPO runs part (2026-11-28): grep and cut fail at once,
# and either message can come first.
CUT_FIRST = ("Exit code: 0\nExecution output of [execute_bash]:\n[STDOUT]\n\n[STDERR]\ncut: invalid option -- 'm'\n"
             "Try 'cut --help' for more information.\ngrep: /testbed/documents/nororholm.txt: No such file or directory")


def record(command: str, observation: str, tool: str = "execute_bash") -> Trajectory:
    call = ToolCallRecord(id="c1", tool=tool, arguments={"command": command}, raw_arguments=None,
                          observation=observation, exit_code=0, exec_time_s=0.01)
    step = Step(index=0, content=None, reasoning=None, calls=[call], llm_latency_s=0.0, prompt_tokens=1,
                completion_tokens=1, cached_tokens=0)
    return Trajectory(task_id="t", model="m", mode="sandbox", steps=[step])


def test_a_pipeline_whose_stages_both_complain_is_flagged():
    assert concurrent_output(record("grep -n -i -m 3 river /testbed/documents/nororholm.txt | cut -m 3 1-20 | head", CUT_FIRST))
    assert concurrent_output(record("python3 a.py & sort b", "Exit code: 0\n[STDOUT]\n\n[STDERR]\n"
                                    "python3: can't open file 'a.py'\nsort: cannot read: b"))


def test_one_program_or_commands_in_sequence_are_not():
    one = "Exit code: 2\n[STDOUT]\n\n[STDERR]\ngrep: x: No such file or directory\ngrep: y: No such file or directory"
    assert not concurrent_output(record("grep a x y | head", one))            # one program's messages
    assert not concurrent_output(record("grep a x && cut -m 1 y; ls z || true", CUT_FIRST))  # one after another
    assert not concurrent_output(record("grep a x 2>&1 >/dev/null", CUT_FIRST))  # a redirection, not a job
    assert not concurrent_output(record("ls | head", "Exit code: 0\n[STDOUT]\ngrep: in a file name\ncut: too\n"))  # stdout
    assert not concurrent_output(record("a | b", CUT_FIRST, tool="str_replace_editor"))


def test_what_the_mode_cannot_order_is_unordered_output():
    """Two greps of one pipeline that wrote single lines are put in one order by the mode (the second cause
    of the runs under load, 2026-11-28), so that episode is not flagged; a grep message with a line after it
    that names no program is (which grep wrote it is the scheduler's), and the run is not reproducible."""
    from lis.agent.trajectory import unordered_output

    command = "grep -n -i -m m 3 'founded' /testbed/documents/* | grep"
    obs = ("Exit code: 2\n[STDOUT]\n\n[STDERR]\nUsage: grep [OPTION]... PATTERNS [FILE]...\n"
           "Try 'grep --help' for more information.\ngrep: invalid max count")
    assert not unordered_output(record(command, obs)) and concurrent_output(record(command, obs))
    continued = "Exit code: 2\n[STDOUT]\n\n[STDERR]\ngrep: warning: x\n  more of a grep's\ngrep: y"
    assert unordered_output(record("grep -P x a | grep -P y", continued))
    assert not unordered_output(record("grep -n -i -m 3 river /testbed/documents/nororholm.txt | cut -m 3 1-20", CUT_FIRST))
    assert not unordered_output(record("grep a x; grep b y", continued))  # one after another

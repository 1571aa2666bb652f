"""The error output of programs that ran at once, put in an order the scheduler does not choose.

``grep -n river MISSING | cut -m 3`` starts both programs together; both fail at once and write to
the same stderr, and which message comes first is the kernel scheduler's choice. The same command can
then give two observations, and an episode two courses (docs/training.md, "Determinism"). In the
deterministic mode (``grpo.rollout.deterministic``, ``eval.deterministic``) :func:`by_program` puts such
a stream in one order: each program's messages together, the programs in the order the command names
them. What a single program wrote keeps its own order.

A message is a line ``name: ...`` where ``name`` is a program the command names, with the lines after it
that start no such message (a traceback's lines, a message's continuation). GNU tools' usage lines name
their program (``Usage: grep [OPTION]...``, ``Try 'cut --help' for more information.``), and the shell's
message about one of the command's processes names it (``main: line 2: ead: command not found``): each
is that program's, wherever the scheduler put it, not the message's before it.

Not fixed, and so not ordered but reported (:func:`programs_at_once`, which ``concurrent_output`` and the
runs' ``reproducible`` use):

- one program named twice among processes that run at once (``grep -m m x | grep``): its two processes'
  messages cannot be told apart in the text (seen: two deterministic GRPO runs under load parted at step 6
  on ``grep: invalid max count`` and grep's usage lines in either order; docs/training.md);
- a line two programs cut into each other: GNU tools write ``name: ``, the text and the newline with
  separate writes to an unbuffered stderr, and under load one program's line lands inside another's
  (seen: ``grep: Try 'cut --help' ...`` then the rest of grep's line). In the mode the sandbox's shell
  runs with ``lis.sandbox.base.LINE_BUFFERED_STDERR`` in its environment, so every program that writes through C's
  stdio (bash, coreutils, grep, sed, ...) writes each stderr line whole; programs that write otherwise
  (Python's own ``sys.stderr``, static binaries) are not changed.

Only capturing each process's stderr apart would fix all of it; see docs/training.md ("Determinism").
"""
from __future__ import annotations

import re

# processes that run at once: a pipe (not ||, |& included) or a background & (not &&, >&, &>)
AT_ONCE = re.compile(r"(?<!\|)\|(?!\|)|(?<![&>])&(?![&>])")
PROGRAM_MESSAGE = re.compile(r"^([A-Za-z0-9_.+-]+): ", re.M)  # "grep: ...", "cut: ...", "bash: ..."
# GNU usage lines, which name their program: "Usage: grep [OPTION]...", "Try 'cut --help' for more information."
# the shell's message about one process of the command: "main: line 2: ead: command not found" is ead's
# (``main`` is the sandbox shell's name; ``bash`` elsewhere)
SHELL_LINE = re.compile(r"^(?:main|bash|sh): line \d+: (?:\S*/)?([A-Za-z0-9_.+-]+): ", re.M)
USAGE_LINE = re.compile(r"^(?:Usage: (?:\S*/)?([A-Za-z0-9_.+-]+)(?: |$)|Try '(?:\S*/)?([A-Za-z0-9_.+-]+) --help')", re.M)


def _named(command: str, program: str) -> list[int]:
    """Where ``command`` names ``program`` as a word (``/usr/bin/grep`` names ``grep``)."""
    return [m.start() for m in re.finditer(rf"(?<![\w.+-]){re.escape(program)}(?![\w.+-])", command)]


def _named_at(command: str, program: str) -> int | None:
    """Where ``command`` first names ``program``; None if it does not."""
    return next(iter(_named(command, program)), None)


def _times_named(command: str, program: str) -> int:
    return len(_named(command, program))


def _owner(line: str) -> str | None:
    """The program a line names as its writer: ``name: ...``, ``Usage: name ...``, ``Try 'name --help'``."""
    m = USAGE_LINE.match(line)  # first: "Usage: grep ..." is grep's, not a program called Usage
    if m:
        return m.group(1) or m.group(2)
    m = SHELL_LINE.match(line)  # and "main: line 2: ead: ..." is ead's, not the shell's
    if m:
        return m.group(1)
    m = PROGRAM_MESSAGE.match(line)
    return m.group(1) if m else None


def _writers(command: str, stderr: str) -> list[str]:
    """The programs ``command`` names that wrote lines to ``stderr``, in the order they first wrote."""
    owners = (_owner(line) for line in stderr.split("\n"))
    return [name for name in dict.fromkeys(o for o in owners if o) if _named_at(command, name) is not None]


def programs_at_once(command: str, stderr: str) -> list[str]:
    """The programs that ``command`` names and that wrote to ``stderr``, when the command runs processes at
    once (a pipe or a background job) and the order of what they wrote is the scheduler's: two or more
    programs wrote, or one that the command names twice (two processes of one name); else []."""
    if not AT_ONCE.search(command):
        return []
    named = _writers(command, stderr)
    if len(named) >= 2 or any(_times_named(command, name) >= 2 for name in named):
        return named
    return []


def one_program_twice(command: str, stderr: str) -> bool:
    """Whether a program that ``command`` names twice among processes that run at once wrote to ``stderr``
    (``grep -m m x | grep``): whose line came first is the scheduler's, and the text cannot tell its two
    processes apart, so :func:`by_program` leaves their lines as written."""
    return bool(AT_ONCE.search(command)) and any(_times_named(command, n) >= 2 for n in _writers(command, stderr))


def by_program(command: str, stderr: str) -> str:
    """``stderr`` with each program's messages together, programs in the order ``command`` names them;
    unchanged unless two programs the command runs at once wrote to it. A program's own lines keep their
    order (two processes of one name: the order they came in; :func:`programs_at_once` reports them)."""
    if not AT_ONCE.search(command):
        return stderr
    programs = _writers(command, stderr)
    if len(programs) < 2:
        return stderr
    end = "\n" if stderr.endswith("\n") else ""
    lines = (stderr[:-1] if end else stderr).split("\n")
    messages: list[tuple[str | None, list[str]]] = []
    for line in lines:
        owner = _owner(line)
        if owner in programs:
            messages.append((owner, [line]))
        elif messages:
            messages[-1][1].append(line)
        else:
            messages.append((None, [line]))  # lines before any program's message stay first
    rank = {p: _named_at(command, p) for p in programs}
    ordered = sorted(messages, key=lambda msg: -1 if msg[0] is None else rank[msg[0]])  # stable: a program's own order
    return "\n".join(line for _, block in ordered for line in block) + end

"""The error output of programs that ran at once, put in an order the scheduler does not choose.

``grep -n river MISSING | cut -m 3`` starts both programs together; both fail at once and write to
the same stderr, and which message comes first is the kernel scheduler's choice. The same command can
then give two observations, and an episode two courses (docs/training.md, "Determinism"). In the
deterministic mode (``grpo.rollout.deterministic``, ``eval.deterministic``) :func:`by_program` puts such
a stream in one order: each program's messages together, the programs in the order the command names
them. What a single process wrote keeps its own order.

A message is a line ``name: ...`` where ``name`` is a program the command names, with the lines after it
that start no such message (a traceback's lines, a message's continuation). GNU tools' usage lines name
their program (``Usage: grep [OPTION]...``, ``Try 'cut --help' for more information.``), and the shell's
message about one of the command's processes names it (``main: line 2: ead: command not found``): each
is that program's, wherever the scheduler put it, not the message's before it.

A program the command names twice (``grep -m m x | grep``) runs as two processes whose lines the text
cannot tell apart: its messages get an order of their own (its ``name: ...`` lines, then its ``Usage:``
lines, then its ``Try '...'`` lines, each kind by text). The shell's own messages (``main: eval: line 3:
...``) are written once the lines before them have run, so nothing is moved across them.

Not fixed, and so reported (:func:`cannot_order`, used by ``unordered_output`` and the runs'
``reproducible``; :func:`programs_at_once` says whether such output was there at all): a program named
twice whose messages have continuation lines; a line two programs cut into each other (GNU tools write
``name: `` and the text separately to an unbuffered stderr; the mode's shell runs with
``lis.sandbox.base.LINE_BUFFERED_STDERR`` so that programs writing through C's stdio write each line
whole); output that names no program of the command. Only capturing each process's stderr apart would
fix all of it; see docs/training.md ("Determinism").
"""
from __future__ import annotations

import re

# processes that run at once: a pipe (not ||, |& included) or a background & (not &&, >&, &>)
AT_ONCE = re.compile(r"(?<!\|)\|(?!\|)|(?<![&>])&(?![&>])")
PROGRAM_MESSAGE = re.compile(r"^([A-Za-z0-9_.+-]+): ", re.M)  # "grep: ...", "cut: ...", "bash: ..."
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


def by_program(command: str, stderr: str) -> str:
    """``stderr`` with each program's messages together, programs in the order ``command`` names them, a
    program named twice in its own order (kind, then text); unchanged unless the command runs processes at
    once and two programs, or one named twice, wrote to it. A process's own lines otherwise keep their
    order, and nothing moves across the shell's own messages."""
    if not AT_ONCE.search(command):
        return stderr
    programs = _writers(command, stderr)
    twice = {p for p in programs if _times_named(command, p) >= 2}
    if len(programs) < 2 and not twice:
        return stderr
    end = "\n" if stderr.endswith("\n") else ""
    rank = {p: _named_at(command, p) for p in programs}

    def key(item: tuple[int, tuple[str | None, list[str]]]) -> tuple:
        index, (owner, block) = item
        if owner is None:  # lines before any program's message stay first
            return (-1, 0, "", index)
        if owner in twice:  # two processes of one name: an order of their own
            return (rank[owner], _kind(block[0]), "\n".join(block), index)
        return (rank[owner], 0, "", index)  # stable: a process's own order

    out: list[str] = []
    for segment, barrier in _segments((stderr[:-1] if end else stderr).split("\n"), programs):
        ordered = sorted(enumerate(_messages(segment, programs)), key=key)
        out.extend(line for _, (_, block) in ordered for line in block)
        out.extend(barrier)
    return "\n".join(out) + end


def cannot_order(command: str, stderr: str) -> bool:
    """Whether ``stderr`` holds what :func:`by_program` cannot put in one order: a message with continuation
    lines from a program that ``command`` names twice among processes that run at once (which of its two
    processes wrote the lines after a message is the scheduler's)."""
    if not AT_ONCE.search(command):
        return False
    programs = _writers(command, stderr)
    twice = {p for p in programs if _times_named(command, p) >= 2}
    return any(owner in twice and len(block) > 1
               for segment, _ in _segments(stderr.rstrip("\n").split("\n"), programs)
               for owner, block in _messages(segment, programs))


SHELL_OWN = re.compile(r"^(?:main|bash|sh): ")
KINDS = ("Usage: ", "Try '")  # a program's message first, then its usage line, then its "Try" line


def _kind(line: str) -> int:
    return next((i + 1 for i, prefix in enumerate(KINDS) if line.startswith(prefix)), 0)


def _segments(lines: list[str], programs: list[str]) -> list[tuple[list[str], list[str]]]:
    """``lines`` cut at the shell's own messages (not about one of ``programs``): each segment with the
    shell's lines that end it, which stay in place."""
    segments: list[tuple[list[str], list[str]]] = [([], [])]
    for line in lines:
        if SHELL_OWN.match(line) and _owner(line) not in programs:
            segments[-1][1].append(line)
        else:
            if segments[-1][1]:
                segments.append(([], []))
            segments[-1][0].append(line)
    return segments


def _messages(lines: list[str], programs: list[str]) -> list[tuple[str | None, list[str]]]:
    """``lines`` as messages: a line of one of ``programs`` with the lines after it that are no program's
    (the lines before any program's line: owner None)."""
    messages: list[tuple[str | None, list[str]]] = []
    for line in lines:
        owner = _owner(line)
        if owner in programs:
            messages.append((owner, [line]))
        elif messages:
            messages[-1][1].append(line)
        else:
            messages.append((None, [line]))
    return messages

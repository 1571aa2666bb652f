"""The error output of programs that ran at once, put in an order the scheduler does not choose.

``grep -n river MISSING | cut -m 3`` starts both programs together; both fail at once and write to
the same stderr, and which message comes first is the kernel scheduler's choice. The same command can
then give two observations, and an episode two courses (docs/training.md, "Determinism"). In the
deterministic mode (``grpo.rollout.deterministic``, ``eval.deterministic``) :func:`by_program` puts such
a stream in one order: each program's messages together, the programs in the order the command names
them. What a single program wrote keeps its own order.

A message is a line ``name: ...`` where ``name`` is a program the command names, with the lines after it
that start no such message (a traceback's lines, a message's continuation). The order is fixed when
each program writes its lines whole; GNU tools write ``name: ``, the text and the newline with
separate writes, so two programs can still cut into each other's line — rarer by far, and not fixed.
"""
from __future__ import annotations

import re

# processes that run at once: a pipe (not ||, |& included) or a background & (not &&, >&, &>)
AT_ONCE = re.compile(r"(?<!\|)\|(?!\|)|(?<![&>])&(?![&>])")
PROGRAM_MESSAGE = re.compile(r"^([A-Za-z0-9_.+-]+): ", re.M)  # "grep: ...", "cut: ...", "bash: ..."


def _named_at(command: str, program: str) -> int | None:
    """Where ``command`` first names ``program`` as a word (``/usr/bin/grep`` names ``grep``); None if it does not."""
    m = re.search(rf"(?<![\w.+-]){re.escape(program)}(?![\w.+-])", command)
    return m.start() if m else None


def programs_at_once(command: str, stderr: str) -> list[str]:
    """The programs that ``command`` names and that wrote messages to ``stderr``, when the command runs
    processes at once (a pipe or a background job) and two or more of them wrote: else []."""
    if not AT_ONCE.search(command):
        return []
    named = []
    for name in dict.fromkeys(PROGRAM_MESSAGE.findall(stderr)):
        if _named_at(command, name) is not None:
            named.append(name)
    return named if len(named) >= 2 else []


def by_program(command: str, stderr: str) -> str:
    """``stderr`` with each program's messages together, programs in the order ``command`` names them;
    unchanged unless two programs the command runs at once wrote to it (:func:`programs_at_once`)."""
    programs = programs_at_once(command, stderr)
    if not programs:
        return stderr
    end = "\n" if stderr.endswith("\n") else ""
    lines = (stderr[:-1] if end else stderr).split("\n")
    messages: list[tuple[str | None, list[str]]] = []
    for line in lines:
        m = PROGRAM_MESSAGE.match(line)
        if m and m.group(1) in programs:
            messages.append((m.group(1), [line]))
        elif messages:
            messages[-1][1].append(line)
        else:
            messages.append((None, [line]))  # lines before any program's message stay first
    rank = {p: _named_at(command, p) for p in programs}
    ordered = sorted(messages, key=lambda msg: -1 if msg[0] is None else rank[msg[0]])  # stable: a program's own order
    return "\n".join(line for _, block in ordered for line in block) + end

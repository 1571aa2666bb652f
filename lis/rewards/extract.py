"""Pulling the answer out of a response: reasoning stripped, ``\\boxed{...}`` found brace-balanced."""
from __future__ import annotations

import re
from typing import NamedTuple

_BOXED = re.compile(r"\\boxed\s*\{")
_BRACE = re.compile(r"\\[{}]|[{}]")  # an escaped brace (opens or closes nothing), or a brace

# The most of a response the extractor reads: its last 4 Mi characters (answers come at the end). The
# answer file holds at most 1 MiB and a reply at most its token budget, so this bounds only what arrives
# some other way; time and memory stay linear in it either way.
SCAN_LIMIT = 1 << 22


class Box(NamedTuple):
    """A complete ``\\boxed{...}``: where ``\\boxed`` starts, and where its contents start and end."""
    start: int
    begin: int
    end: int

    def contents(self, text: str) -> str:
        return text[self.begin:self.end]


def strip_thinking(text: str) -> str:
    """Everything after the last ``</think>`` (the whole text when there is none)."""
    return text.rsplit("</think>", 1)[-1] if "</think>" in text else text


def boxed_spans(text: str) -> list[Box]:
    """Every complete ``\\boxed{...}`` of ``text`` (its last :data:`SCAN_LIMIT` characters; positions
    are in the text given), in order of their starts, braces balanced (an escaped ``\\{`` or ``\\}``
    opens or closes nothing; unclosed ones are skipped).

    One pass with a stack of open groups, holding positions only: time and memory are linear in the
    text whatever it holds. Slicing every box's contents would not be: n nested boxes copy ~n²/2
    characters (116,000 nested boxes, the 1 MiB an answer file may hold, would copy ~50 GB).
    Slice the ones you need with :meth:`Box.contents`."""
    offset = max(0, len(text) - SCAN_LIMIT)
    if offset:
        text = text[offset:]
    starts = {m.end() - 1: m.start() for m in _BOXED.finditer(text)}  # its "{" → where \boxed starts
    stack: list[int] = []  # per open group: the position of its "{"
    found: list[Box] = []
    for m in _BRACE.finditer(text):
        ch = m.group()
        if ch == "{":
            stack.append(m.start())
        elif ch == "}" and stack:
            opened = stack.pop()
            start = starts.get(opened)
            if start is not None:
                found.append(Box(start + offset, opened + 1 + offset, m.start() + offset))
    found.sort()
    return found


def boxed_contents(text: str) -> list[str]:
    """The contents of every complete ``\\boxed{...}`` in order, braces balanced (unclosed ones skipped).
    Each is a copy: on deeply nested boxes that is quadratic; scorers use :func:`last_boxed` or
    :func:`boxed_spans`."""
    return [box.contents(text) for box in boxed_spans(text)]


def last_boxed(text: str) -> str | None:
    """The content of the last complete ``\\boxed{...}`` (the last to start), or None when there is none."""
    found = boxed_spans(text)
    return found[-1].contents(text) if found else None

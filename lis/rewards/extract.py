"""Pulling the answer out of a response: reasoning stripped, ``\\boxed{...}`` found brace-balanced."""
from __future__ import annotations

import re

_BOXED = re.compile(r"\\boxed\s*\{")


def strip_thinking(text: str) -> str:
    """Everything after the last ``</think>`` (the whole text when there is none)."""
    return text.rsplit("</think>", 1)[-1] if "</think>" in text else text


def boxed_spans(text: str) -> list[tuple[int, str]]:
    """(start of ``\\boxed``, contents) of every complete ``\\boxed{...}``, in order of their starts,
    braces balanced (an escaped ``\\{`` or ``\\}`` opens or closes nothing; unclosed ones are skipped).

    One pass with a stack of open groups: linear in the text, whatever it holds (a degenerate reply
    of 20,000 unclosed ``\\boxed{`` is scored in milliseconds; rescanning to the end for each one,
    as before, took minutes)."""
    starts = {m.end() - 1: (m.start(), m.end()) for m in _BOXED.finditer(text)}  # its "{" → (start, content start)
    stack: list[tuple[int, int] | None] = []  # per open group: the boxed it opens, or None for a plain "{"
    found = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] in "{}":
            i += 2  # an escaped brace
            continue
        if ch == "{":
            stack.append(starts.get(i))
        elif ch == "}" and stack:
            opened = stack.pop()
            if opened is not None:
                found.append((opened[0], text[opened[1]:i]))
        i += 1
    return sorted(found)


def boxed_contents(text: str) -> list[str]:
    """The contents of every complete ``\\boxed{...}`` in order, braces balanced (unclosed ones skipped)."""
    return [content for _, content in boxed_spans(text)]


def last_boxed(text: str) -> str | None:
    """The content of the last complete ``\\boxed{...}``, or None when there is none."""
    found = boxed_contents(text)
    return found[-1] if found else None

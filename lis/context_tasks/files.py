"""Documents as files: long documents split by section, then by size; file names; where a fact is.

A document no longer than ``max_chars`` is one file. A longer one is cut at its section
headings (``#`` lines) and blank lines into parts of at most ``max_chars`` (a paragraph longer
than that is cut at line ends, then at sentence ends, then anywhere), each part its own file:
``<stem>_part1.txt``, ``<stem>_part2.txt``, ...
"""
from __future__ import annotations

import re

_SENTENCE = re.compile(r"(?<=[.!?])(\s+)")


def slug(name: str) -> str:
    """``"Port Essel"`` → ``"port_essel"`` (lower case letters, digits and underscores)."""
    s = re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")
    return s or "document"


def _pieces(text: str, max_chars: int) -> list[str]:
    """``text`` cut into pieces of at most ``max_chars``: at line ends, sentence ends, then anywhere."""
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        if len(line) <= max_chars:
            out.append(line)
            continue
        bits = _SENTENCE.split(line)  # sentence, whitespace, sentence, ...
        for sent in ("".join(bits[i:i + 2]) for i in range(0, len(bits), 2)):
            while len(sent) > max_chars:
                out.append(sent[:max_chars])
                sent = sent[max_chars:]
            if sent:
                out.append(sent)
    return out


def _sections(text: str) -> list[str]:
    """Blocks of ``text``: a heading line or the first line after a blank line starts a new one."""
    blocks: list[str] = []
    cur, blank = "", False
    for line in text.splitlines(keepends=True):
        if cur and (line.startswith("#") or (blank and line.strip())):
            blocks.append(cur)
            cur = ""
        cur += line
        blank = not line.strip()
    if cur:
        blocks.append(cur)
    return blocks


def split_text(text: str, max_chars: int) -> list[str]:
    """``text`` as parts of at most ``max_chars`` characters, cut at sections where possible.

    Joining the parts gives ``text`` back.
    """
    if len(text) <= max_chars:
        return [text]
    parts: list[str] = []
    cur = ""
    for sec in _sections(text):
        units = [sec] if len(sec) <= max_chars else _pieces(sec, max_chars)
        for u in units:
            if cur and len(cur) + len(u) > max_chars:
                parts.append(cur)
                cur = ""
            cur += u
    if cur:
        parts.append(cur)
    return parts


def file_names(stem: str, n: int) -> list[str]:
    return [f"{stem}.txt"] if n == 1 else [f"{stem}_part{i}.txt" for i in range(1, n + 1)]


def locate(files: dict[str, str], needle: str) -> tuple[str, int] | None:
    """(file name, 1-based line) of the first line holding ``needle``, or None."""
    for name, text in files.items():
        for i, line in enumerate(text.split("\n"), 1):
            if needle in line:
                return name, i
    return None

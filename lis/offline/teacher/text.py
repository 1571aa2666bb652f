"""Random text for the tiny model's synthetic tasks: sentences, documents, file names, answers.

Everything is drawn from a ``random.Random`` passed in, so the same seed gives the same text.
The words are generic on purpose: the warm-up teaches the form of an episode, not facts.
"""
from __future__ import annotations

import random
import re

WORDS = ("revenue", "policy", "river", "engine", "protein", "budget", "orbit", "harvest", "treaty", "signal",
         "museum", "vaccine", "market", "glacier", "census", "bridge", "reactor", "festival", "library", "tariff",
         "network", "climate", "patient", "voltage", "species", "contract", "garden", "pipeline", "council",
         "satellite", "enzyme", "archive", "harbor", "survey", "turbine", "ledger", "forest", "lattice", "index")
VERBS = ("increased", "fell", "was reviewed", "doubled", "remained stable", "was delayed", "was approved",
         "changed", "was measured", "reached a peak")
TOPICS = ("competition", "trade", "energy", "health care", "education", "transport", "water supply", "finance",
          "agriculture", "housing", "research funding", "public safety")
DOC_STEMS = ("report", "notes", "memo", "article", "summary", "minutes", "chapter", "review", "brief", "annex",
             "Annual-Report", "working paper", "FULLTEXT", "DAF-COMP(2023)", "policy_note", "Q3 results")
DOC_EXTS = (".txt", ".txt", ".txt", ".md")
_NUMBER = re.compile(r"(?<![A-Za-z_\\])\d+")


def sentence(rng: random.Random) -> str:
    """One plain sentence with a number in it."""
    a, b = rng.sample(WORDS, 2)
    year = 1990 + rng.randint(0, 35)
    forms = (f"The {a} figure for {year} was {rng.randint(10, 9999)}.",
             f"In {year} the {a} {rng.choice(VERBS)} after the {b} report.",
             f"Section {rng.randint(1, 12)} discusses the {a} and the {b}.",
             f"The {a} of the {rng.choice(TOPICS)} sector {rng.choice(VERBS)} by {rng.randint(2, 60)} percent.",
             f"According to the {b} survey, {rng.randint(2, 95)} firms reported a change in {a}.")
    return rng.choice(forms)


def paragraph(rng: random.Random, n: int) -> str:
    return " ".join(sentence(rng) for _ in range(n))


def document(rng: random.Random, lines: int) -> str:
    """A small document: a title, then short lines of sentences (no trailing newline)."""
    topic, kind = rng.choice(TOPICS).title(), rng.choice(("Review", "Report", "Notes", "Brief"))
    title = f"# {topic} {kind} {rng.randint(1990, 2025)}"
    body = [sentence(rng) if rng.random() < 0.85 else "" for _ in range(lines)]
    return "\n".join([title, ""] + body)


def document_names(rng: random.Random, n: int) -> list[str]:
    """``n`` distinct file names, some with spaces or parentheses (they need quoting in bash)."""
    names: list[str] = []
    while len(names) < n:
        stem = rng.choice(DOC_STEMS)
        name = f"{stem}{rng.choice(('', '_', '-', ' '))}{rng.randint(1, 40)}{rng.choice(DOC_EXTS)}"
        if name not in names:
            names.append(name)
    return names


def vary_numbers(text: str, rng: random.Random) -> str:
    """``text`` with each integer (not inside a LaTeX command or identifier) replaced by a random
    integer of the same number of digits."""
    def swap(m: re.Match) -> str:
        digits = m.group(0)
        lo = 10 ** (len(digits) - 1) if len(digits) > 1 else 0
        return str(rng.randint(lo, 10 ** len(digits) - 1))
    return _NUMBER.sub(swap, text)


def vary_sentences(text: str, rng: random.Random) -> str:
    """``text`` with two of its sentences swapped (when it has several) and its numbers varied."""
    parts = re.split(r"(?<=[.?!])\s+(?=[A-Z])", text)
    if len(parts) > 2 and rng.random() < 0.5:
        i, j = rng.sample(range(len(parts)), 2)
        parts[i], parts[j] = parts[j], parts[i]
    return vary_numbers(" ".join(parts), rng)


def keywords(text: str, rng: random.Random, n: int = 1) -> list[str]:
    """Up to ``n`` words of ``text`` (5+ letters), for grep patterns and answers."""
    words = sorted({w.lower() for w in re.findall(r"[A-Za-z]{5,}", text)})
    return rng.sample(words, min(n, len(words))) if words else [rng.choice(WORDS)]


def short_text(rng: random.Random, words: list[str] | None = None, sentences: int = 3) -> str:
    """A few sentences; ``words`` are worked in (instruction-following answers)."""
    out = []
    for i in range(sentences):
        s = sentence(rng)
        if words:
            s = s[:-1] + f", and the {words[i % len(words)]} matters here."
        out.append(s)
    return " ".join(out)


def boxed_value(rng: random.Random) -> str:
    """A random final answer of the kind math/physics problems ask for (never a real task's answer)."""
    r = rng.random()
    if r < 0.55:
        return str(rng.randint(0, 999))
    if r < 0.7:
        return f"{rng.randint(1, 99)}.{rng.randint(0, 99):02d}"
    if r < 0.8:
        return rng.choice(("True", "False"))
    if r < 0.9:
        return f"\\frac{{{rng.randint(1, 9)}}}{{{rng.randint(2, 12)}}}"
    return f"{rng.randint(2, 9)}\\sqrt{{{rng.choice((2, 3, 5, 7))}}}"

"""Prompt templates (package data under lis/prompts/templates) and the one function that fills them.

Placeholders are ``{name}`` for the names in :data:`PLACEHOLDERS` only; every other brace is
literal text, so a template writes ``\\boxed{}`` exactly as the model must see it (the official
YAML needed ``\\\\boxed{{}}`` and showed the model ``\\\\boxed{}``). :func:`fill` substitutes in
one pass over the template, so text put in (a problem, a document) is never scanned again.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from lis.errors import LisError

PLACEHOLDERS = ("role", "task", "answer_note", "encouraged_approaches", "anti_hardcoding", "critical_boxed",
                "working_dir", "input_dir", "output_dir", "answer_file", "letters",
                "problem_statement", "documents", "number", "text")
_ANY = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


@lru_cache(maxsize=None)
def template(name: str) -> str:
    """Text of ``templates/<name>`` without its final newline; raises LisError when the file is missing."""
    try:
        text = resources.files("lis.prompts").joinpath("templates", *name.split("/")).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LisError(f"prompt template {name} is missing from lis/prompts/templates",
                       "reinstall lis (pip install -e .)") from None
    return text[:-1] if text.endswith("\n") else text


@lru_cache(maxsize=None)
def parts() -> dict[str, dict[str, str]]:
    """The per-domain pieces of the sandbox system prompt (``templates/sandbox/parts.yaml``)."""
    return yaml.safe_load(template("sandbox/parts.yaml"))


def fill(text: str, values: dict[str, Any]) -> str:
    """``text`` with ``{name}`` replaced by ``values[name]`` for the names given, in one pass.

    Placeholders of other names stay for a later pass. Raises LisError for a name outside
    :data:`PLACEHOLDERS` (a typo in the caller).
    """
    unknown = set(values) - set(PLACEHOLDERS)
    if unknown:
        raise LisError(f"unknown prompt placeholder(s) {sorted(unknown)}")
    if not values:
        return text
    pattern = re.compile(r"\{(" + "|".join(map(re.escape, values)) + r")\}")
    return pattern.sub(lambda m: str(values[m.group(1)]), text)


def leftover(text: str) -> list[str]:
    """Placeholder names still present in ``text``."""
    return _ANY.findall(text)


def finish(text: str, trusted: dict[str, Any], untrusted: dict[str, Any], what: str) -> str:
    """Fill ``trusted`` values, check that only ``untrusted`` placeholders remain, then fill those last.

    Raises LisError naming ``what`` when a placeholder would stay unfilled.
    """
    text = fill(text, trusted)
    missing = sorted(set(leftover(text)) - set(untrusted))
    if missing:
        raise LisError(f"prompt {what}: no value for {', '.join('{' + m + '}' for m in missing)}")
    return fill(text, untrusted)

"""The report's HTML pages from Jinja2 templates (package data under lis/report/templates).

The paper_figures index page and the trajectory viewer's pages are rendered by :func:`render` with
one shared environment: autoescape on for every template (records are model and environment output,
hence hostile: nothing of theirs is marked safe or placed in a script); ``StrictUndefined`` (a
missing name is an error, never an empty string); ``None`` prints as an empty string; block-tag
lines leave nothing in the page. Callers pass plain data; the templates hold the markup.
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

FOLD_CHARS = 2000   # a viewer text longer than this (or with more lines) is folded, whole
FOLD_LINES = 40


def num(x: Any, digits: int = 2) -> str:
    """A number for reading (thousands separated, ``digits`` decimals for floats); ``–`` for None;
    anything else as its text (escaped by the template)."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    return str(x)


def as_text(x: Any) -> str:
    """The text a ``<pre>`` shows for a record's value: a string as is, None as nothing, anything
    else as indented JSON."""
    if x is None:
        return ""
    return x if isinstance(x, str) else json.dumps(x, ensure_ascii=False, indent=2)


def line_count(s: str) -> int:
    return s.count("\n") + 1 if s else 0


def dumps(x: Any) -> str:
    return json.dumps(x, ensure_ascii=False)


def _finalize(x: Any) -> Any:
    return "" if x is None else x


@lru_cache(maxsize=None)
def environment() -> Environment:
    env = Environment(loader=PackageLoader("lis.report", "templates"),
                      autoescape=select_autoescape(enabled_extensions=("html", "html.j2"),
                                                   default_for_string=True, default=True),
                      undefined=StrictUndefined, finalize=_finalize, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True, auto_reload=False)
    env.filters.update(num=num, as_text=as_text, line_count=line_count, dumps=dumps)
    env.globals.update(FOLD_CHARS=FOLD_CHARS, FOLD_LINES=FOLD_LINES)
    return env


def render(name: str, **data: Any) -> str:
    """The page of template ``name`` (under lis/report/templates) filled with ``data``."""
    return environment().get_template(name).render(**data)

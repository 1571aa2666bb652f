"""Every `lis` command line in the code blocks of the README and of the docs pages (docs/*.md) parses with
the CLI, and the models it names exist.

Each line is parsed by the real parser of its command (types, ranges, choices, required options; nothing
runs); a `--model NAME` without `--base-url` must be an entry of the models section of the profile the
line uses (or a local folder), as `lis run` and `lis eval run` resolve it.
"""
from __future__ import annotations

import re
import shlex

import pytest
import typer

from lis.cli import app
from tests.conftest import ROOT

def blocks(text: str) -> list[str]:
    """The shell code blocks (```bash, ```sh, ```console or plain ```)."""
    found, lang, body = [], None, []
    for raw in text.splitlines():
        if raw.lstrip().startswith("```"):
            if lang is None:
                lang, body = raw.lstrip()[3:].strip(), []
            else:
                if lang in ("", "bash", "sh", "console", "shell"):
                    found.append("\n".join(body))
                lang = None
        elif lang is not None:
            body.append(raw)
    return found


SYNOPSIS = re.compile(r"\[[^\]]*\]|\S\|\S|\.\.\.")  # [optional] parts, a|b alternatives, PATH...


def command_lines(text: str) -> list[str]:
    """The `lis` lines of the shell blocks: continuation lines joined, comments dropped; a synopsis
    (``lis behaviour classify --format ours|official|rl PATH... [--turns]``) is documentation, not a command."""
    lines = []
    for block in blocks(text):
        for raw in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = raw.split(" #", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            try:
                words = shlex.split(line)
            except ValueError:  # not a command line (text in a block); a `lis` line must parse
                if re.match(r"^([A-Z_][A-Z0-9_]*=\S*\s+)*lis\s", line):
                    raise
                continue
            while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):  # VAR=value lis ...
                words.pop(0)
            if words and words[0] == "lis" and not SYNOPSIS.search(line):
                lines.append(shlex.join(words))
    return lines


PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINES = [(page.relative_to(ROOT).as_posix(), line) for page in PAGES for line in command_lines(page.read_text())]


# commands whose --model names a models entry (elsewhere, e.g. `lis behaviour import --model`, it is a label)
MODEL_ENTRY_COMMANDS = {"lis run", "lis eval run", "lis serve", "lis throughput"}
# entries a page says its commands add to the params (docs/efficiency.md, "Trying it on the tiny model": a copy of the
# repository whose params add a `tiny-agent` entry)
ADDED_ENTRIES = {"docs/efficiency.md": "tiny-agent"}


def resolve(words: list[str]):
    cmd = typer.main.get_command(app)
    path = ["lis"]
    while hasattr(cmd, "get_command") and words and not words[0].startswith("-"):
        name = words.pop(0)
        sub = cmd.get_command(cmd.context_class(cmd), name)  # the root group loads its commands lazily
        assert sub is not None, f"no command `{' '.join(path)} {name}`"
        cmd = sub
        path.append(name)
    return cmd, " ".join(path)


def test_the_pages_have_command_lines():
    assert len(LINES) >= 10, LINES
    assert "docs/pipeline.md" in {page for page, _ in LINES}


@pytest.mark.parametrize("page,line", LINES, ids=[f"{page}: {line}" for page, line in LINES])
def test_readme_command_parses_and_names_existing_models(page, line, monkeypatch):
    from lis.params import load

    monkeypatch.chdir(ROOT)  # the pages' paths are relative to the checkout
    words = shlex.split(line)[1:]
    cmd, path = resolve(words)
    ctx = cmd.make_context(path, list(words))  # raises on an unknown option, a bad value, a missing one
    values = ctx.params
    model = values.get("model")
    if path not in MODEL_ENTRY_COMMANDS or ADDED_ENTRIES.get(page) == model:
        return
    if isinstance(model, str) and model and not values.get("base_url") and not (ROOT / model).exists():
        params = load(ROOT, profile=values.get("profile"))
        assert model in params.section("models"), \
            f"{page}: `{line}`: no models entry '{model}' in profile {params.profile} ({', '.join(params.section('models'))})"

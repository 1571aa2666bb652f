"""Every `lis` command line in the README's code blocks parses with the CLI, and the models it names exist.

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


def command_lines(text: str) -> list[str]:
    lines = []
    for block in blocks(text):
        for raw in block.splitlines():
            line = raw.split(" #", 1)[0].strip()
            words = shlex.split(line) if line else []
            while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):  # VAR=value lis ...
                words.pop(0)
            if words and words[0] == "lis":
                lines.append(shlex.join(words))
    return lines


LINES = command_lines((ROOT / "README.md").read_text())


def resolve(words: list[str]):
    cmd = typer.main.get_command(app)
    path = ["lis"]
    while getattr(cmd, "commands", None) and words and not words[0].startswith("-"):
        name = words.pop(0)
        assert name in cmd.commands, f"no command `{' '.join(path)} {name}`"
        cmd = cmd.commands[name]
        path.append(name)
    return cmd, " ".join(path)


def test_the_readme_has_command_lines():
    assert len(LINES) >= 10, LINES


@pytest.mark.parametrize("line", LINES)
def test_readme_command_parses_and_names_existing_models(line, monkeypatch):
    from lis.params import load

    monkeypatch.chdir(ROOT)  # the README's paths are relative to the checkout
    words = shlex.split(line)[1:]
    cmd, path = resolve(words)
    ctx = cmd.make_context(path, list(words))  # raises on an unknown option, a bad value, a missing one
    values = ctx.params
    model = values.get("model")
    if isinstance(model, str) and model and not values.get("base_url") and not (ROOT / model).exists():
        params = load(ROOT, profile=values.get("profile"))
        assert model in params.section("models"), \
            f"`{line}`: no models entry '{model}' in profile {params.profile} ({', '.join(params.section('models'))})"

"""A fuzz suite generated from the command tree: every command, every option and argument, hostile values by type.

Nothing here lists commands: the typer app is walked, so a new command or option is covered the day it
is added. For each parameter the generator derives hostile values from its type and role:

  input paths   missing, a folder where a file is meant (a file where a folder is meant), a binary
                file, /proc/..., an empty file, JSON of the wrong shape ([1]), with wrong types
                ({"accuracy": "high"}) or cut short, an empty folder, a folder of broken files
  output paths  under /proc (cannot be created), under a regular file (its parent is not a folder)
  numbers       one below the declared minimum (or -5), one above the declared maximum (or 10**12)
  strings       empty, NUL, invalid UTF-8 (as Python hands it over: a lone surrogate)

Every case runs the real command in-process, through the CLI's error boundary (``lis.cli.run_cli``),
in a scratch copy of the repository, with the other required parameters given plain values. Each case
must end with exit status 1 or 2, an ``error:`` line on stderr, and no traceback; a case that runs
longer than CASE_S is a failure (an unbounded value was accepted). No Docker is needed for a value that
is refused before a sandbox starts, which is every value here.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer

from lis.cli import app, run_cli
from lis.cli.boundary import is_output
from tests.conftest import ROOT, copy_repo

CASE_S = 30
FOLDER = re.compile(r"(_dir|_root|^root|^init|^base_dir|^model_path|^eval_root)$")


def subcommands(cmd) -> dict:
    """A group's sub-commands through click's protocol (the root group loads them lazily)."""
    if not hasattr(cmd, "list_commands"):
        return {}
    ctx = cmd.context_class(cmd)
    return {name: cmd.get_command(ctx, name) for name in cmd.list_commands(ctx)}


def leaves(cmd=None, path=()):
    cmd = cmd or typer.main.get_command(app)
    subs = subcommands(cmd)
    if subs:
        for name, sub in subs.items():
            yield from leaves(sub, (*path, name))
    else:
        yield path, cmd


COMMANDS = {" ".join(path): cmd for path, cmd in leaves()}


class CaseTimeout(BaseException):
    pass


def _annotation(p) -> str:
    return str(p.type_descriptor.annotation)


def kind(p) -> str | None:
    a = _annotation(p)
    if getattr(p, "is_flag", False) or "bool" in a:
        return None
    if "Path" in a:
        return "output" if is_output(p) else "input"
    if "int" in a:
        return "int"
    if "float" in a:
        return "float"
    if "str" in a:
        return "str"
    return None


def hostile(p, scratch: Path) -> list[tuple[str, str]]:
    """(label, value) pairs for parameter ``p``."""
    k = kind(p)
    if k == "input":
        folder_meant = bool(FOLDER.search(p.name)) or not p.type_descriptor.parameter_info.file_okay
        wrong = ("a file for a folder", str(scratch / "text.txt")) if folder_meant else \
            ("a folder for a file", str(scratch / "folder"))
        return [("missing", str(scratch / "missing.jsonl")), wrong, ("binary", str(scratch / "binary.bin")),
                ("/proc", "/proc/lis-fuzz/x.jsonl"), ("empty file", str(scratch / "empty.jsonl")),
                ("JSON of the wrong shape", str(scratch / "list.json")),
                ("JSON with wrong types", str(scratch / "types.json")),
                ("truncated JSON", str(scratch / "truncated.jsonl")),
                ("empty folder", str(scratch / "empty-folder")),
                ("a folder of bad files", str(scratch / "poisoned"))]
    if k == "output":
        return [("under /proc", "/proc/lis-fuzz/out.jsonl"), ("under a file", str(scratch / "text.txt" / "out.jsonl"))]
    if k in ("int", "float"):
        lo = p.min - 1 if p.min is not None else -5
        hi = p.max + 1 if p.max is not None else 10 ** 12
        return [("below the range", str(lo)), ("above the range", str(hi))]
    if k == "str":
        return [("empty", ""), ("NUL", "a\x00b"), ("invalid UTF-8", "q\udcff")]
    return []


def plain(p, scratch: Path) -> str:
    """A value for another required parameter: well-formed, naming nothing that exists."""
    k = kind(p)
    if k == "output":
        return str(scratch / "plain-out")
    if k == "input":
        return str(scratch / "missing.jsonl")
    if k in ("int", "float"):
        return str(p.min if p.min is not None else 1)
    return "x"


def argv_for(path: str, cmd, target, value: str, scratch: Path) -> list[str]:
    args = path.split()
    positional = []
    for p in cmd.params:
        if p.name == "help" or kind(p) is None:
            continue
        if p is target:
            v = value
        elif p.required:
            v = plain(p, scratch)
        else:
            continue
        if p.param_type_name == "argument":
            positional.append(v)
        else:
            args += [p.opts[0], v]
    return args + positional


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    repo = copy_repo(root / "repo")
    files = root / "files"
    files.mkdir()
    (files / "folder").mkdir()
    (files / "empty-folder").mkdir()
    (files / "text.txt").write_text("some text\n")
    (files / "binary.bin").write_bytes(bytes(range(256)) * 8 + b"\xff\xfe\x00\x80")
    (files / "empty.jsonl").write_bytes(b"")
    poison(files)
    return repo, files


BAD_JSON = {"list.json": b"[1]", "types.json": b'{"accuracy": "high", "n": "many", "model": 7, "steps": null}',
            "truncated.jsonl": b'{"id": "t1", "prompt": "1+1?", "answer": "2"}\n{"id": "t2", "prom'}


def poison(files: Path) -> None:
    """Hostile input files, and a folder whose every usual file name holds something broken (the
    files a command finds inside a folder it is given: metrics, manifests, trajectories, model configs)."""
    for name, data in BAD_JSON.items():
        (files / name).write_bytes(data)
    bad = files / "poisoned"
    binary = bytes(range(256)) + b"\xff\xfe"
    for rel, data in {"metrics.json": b"[1, 2, 3]", "manifest.json": b"[1]", "card.json": BAD_JSON["types.json"],
                      "trajectories.jsonl": binary, "trajectory.json": b"[1]", "config.json": b"[1]",
                      "tokenizer.json": binary, "params.yaml": binary, "train_log.csv": binary,
                      "m/math/sandbox/metrics.json": BAD_JSON["types.json"],
                      "m/math/sandbox/trajectories.jsonl": BAD_JSON["truncated.jsonl"]}.items():
        (bad / rel).parent.mkdir(parents=True, exist_ok=True)
        (bad / rel).write_bytes(data)


def _alarm(signum, frame):
    raise CaseTimeout(f"still running after {CASE_S} s")


def run_case(repo: Path, args: list[str]) -> tuple[int, str, float]:
    err = io.StringIO()
    old = os.getcwd()
    prev = signal.signal(signal.SIGALRM, _alarm)
    t0 = time.monotonic()
    try:
        os.chdir(repo)
        signal.alarm(CASE_S)
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = run_cli(args)
    except CaseTimeout as e:
        code, _ = -1, err.write(f"TIMEOUT: {e}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, prev)
        os.chdir(old)
    return code, err.getvalue(), time.monotonic() - t0


def cases(path: str, cmd, files: Path):
    for p in cmd.params:
        if p.name == "help":
            continue
        for label, value in hostile(p, files):
            yield f"{(p.opts or [p.name])[0]} {label}", argv_for(path, cmd, p, value, files)


def test_the_generated_suite_covers_every_command_and_parameter():
    n_params = sum(1 for c in COMMANDS.values() for p in c.params if kind(p))
    n_cases = sum(len(hostile(p, Path("/x"))) for c in COMMANDS.values() for p in c.params if p.name != "help")
    print(f"MEASURED fuzz suite: {len(COMMANDS)} commands, {n_params} parameters, {n_cases} cases")
    assert len(COMMANDS) >= 30 and n_cases >= 5 * len(COMMANDS)


def bad_cases(path: str, repo: Path, files: Path) -> list[str]:
    """The cases of ``lis <path>`` that break the rule, described."""
    bad = []
    for label, args in cases(path, COMMANDS[path], files):
        code, err, took = run_case(repo, args)
        lines = [x for x in err.splitlines() if x.startswith("error:")]
        if code not in (1, 2) or "Traceback" in err or "CaseTimeout" in err or len(lines) != 1:
            shown = [a.encode("unicode_escape").decode() for a in args]
            bad.append(f"{label}: exit {code} after {took:.1f} s, args {shown}: {err.strip()[-400:]}")
    return bad


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_hostile_value_ends_in_one_line_and_status_1_or_2(path, scratch):
    """One process per command: the cases run in-process there (fast), and nothing else of the test
    session (another test's server thread) can write into what a case printed."""
    repo, files = scratch
    n = sum(1 for _ in cases(path, COMMANDS[path], files))
    r = subprocess.run([sys.executable, "-m", "tests.cli.test_fuzz", path, str(repo), str(files)], cwd=ROOT,
                       capture_output=True, text=True, timeout=CASE_S * n + 120)
    assert r.returncode == 0 and r.stdout.strip(), f"the runner failed: {r.stdout[-2000:]}{r.stderr[-3000:]}"
    bad = json.loads(r.stdout.strip().splitlines()[-1])
    assert not bad, f"{len(bad)} of {n} case(s) of `lis {path}` broke the rule:\n" + "\n".join(bad)


if __name__ == "__main__":  # python -m tests.cli.test_fuzz "<command>" REPO FILES
    print(json.dumps(bad_cases(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))))

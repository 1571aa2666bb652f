"""The CLI's error boundary: whatever escapes a command becomes one line on stderr and an exit status.

    2  bad input: a wrong option (the parser's errors), a LisError, a path that cannot be read or
       written, an input file that is not text, JSON or YAML as it should be
    1  a bug in lis: any other exception; the line names the exception and where the traceback is

The traceback never reaches the terminal unless ``LIS_DEBUG=1``; it goes to the stage's log file
(the ``--log`` FILE the command set up), so a pipeline run keeps it in ``logs/``.
"""
from __future__ import annotations

import itertools
import json
import logging
import os
import re
import sys
import traceback
from pathlib import Path

from typer._click import exceptions as click_exceptions
from lis.util import cancel

INPUT_ERRNOS = {"ENOENT", "EISDIR", "ENOTDIR", "EACCES", "EPERM", "EROFS", "ENOSPC", "EDQUOT", "ENAMETOOLONG",
                "ELOOP", "EINVAL", "EEXIST", "ENOTEMPTY", "EFBIG", "EXDEV"}


def report(line: str, status: int) -> int:
    print(f"error: {' '.join(line.split())}", file=sys.stderr)
    return status


def _shown(text: str, limit: int = 60) -> str:
    try:
        raw = text.encode("utf-8", "surrogateescape")  # the bytes the user typed
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "backslashreplace")
    shown = raw.decode("ascii", "backslashreplace")
    shown = shown.replace("\x00", "\\x00")
    return shown if len(shown) <= limit else shown[:limit] + "..."


def unusable_argument(args: list[str]) -> str | None:
    """An argument no command can take: an empty value (an unset shell variable, most often: every
    option has a default or is required, so leaving it out is the way to say nothing), a NUL byte, or
    bytes that are not UTF-8 (Python hands those over as lone surrogates), which every later encode
    of the text would trip on."""
    for i, a in enumerate(args, 1):
        if a == "" or (a.startswith("--") and a.endswith("=") and "=" not in a[:-1]):
            before = args[i - 2] if i > 1 and a == "" else a[:-1]
            if before.startswith("-"):
                return f"option {before} is given an empty value (give a value, or leave the option out)"
            return f"argument {i} is empty (give a value)"
        if "\x00" in a:
            return f"argument {i} ('{_shown(a)}') contains a NUL byte (remove it)"
        try:
            a.encode("utf-8")
        except UnicodeEncodeError:
            return f"argument {i} ('{_shown(a)}') is not valid UTF-8 text (pass UTF-8 text)"
    return None


# Options that name something a command writes (a file or a folder): by name, so that a new command
# that follows the convention is covered without a list to edit (tests/cli/test_fuzz.py uses it too).
OUTPUT_OPTION = re.compile(r"^(out|out_dir|output_dir|log_file|logs|csv_dir|episodes_csv|turns_out|judge_cache)$|_out$")


def is_output(param) -> bool:
    return "Path" in str(getattr(getattr(param, "type_descriptor", None), "annotation", "")) \
        and bool(OUTPUT_OPTION.search(param.name or ""))


def _cannot_write(path: Path) -> str | None:
    p = Path(os.path.abspath(path))
    if p.parts[1:2] in (("proc",), ("sys",)):
        return f"/{p.parts[1]} cannot hold files"
    a = p
    while not os.path.lexists(a):
        a = a.parent
    if a == p:
        return None if os.access(a, os.W_OK) or not a.is_dir() else f"cannot write in {a}"
    if not a.is_dir():
        return f"{a} is a file, not a folder"
    if not os.access(a, os.W_OK):
        return f"cannot write in {a}"
    return None


def unwritable_output(command, args: list[str]) -> str | None:
    """Check every output path on the command line before the command runs (a stage that fails
    to write its result after an hour of work loses the hour)."""
    words = list(args)
    while hasattr(command, "get_command") and words and not words[0].startswith("-"):
        command = command.get_command(command.context_class(command), words.pop(0))  # the root loads lazily
        if command is None:
            return None  # the parser says what is wrong
    opts = {o: p for p in getattr(command, "params", []) if is_output(p) for o in p.opts}
    for i, w in enumerate(words):
        name, eq, val = w.partition("=")
        if name not in opts:
            continue
        value = val if eq else (words[i + 1] if i + 1 < len(words) else "")
        if value:
            problem = _cannot_write(Path(value))
            if problem:
                return f"{name} {_shown(value, 200)}: {problem} (give a path this user can write)"
    return None


def exit_code(rv) -> int:
    """A command's status in non-standalone mode: ``typer.Exit(n)`` comes back as n; a command's
    return value means success (typer's standalone mode ignores it too)."""
    return rv if isinstance(rv, int) and not isinstance(rv, bool) else 0


def usage(e: click_exceptions.ClickException) -> int:
    """The parser's errors (unknown option, bad value, missing argument) as one line."""
    if isinstance(e, click_exceptions.NoArgsIsHelpError):  # the help was printed: nothing to add
        return e.exit_code
    where = ""
    ctx = getattr(e, "ctx", None)
    if ctx is not None and ctx.command_path:
        where = f" (see `{ctx.command_path} --help`)"
    return report(f"{e.format_message()}{where}", e.exit_code if e.exit_code else 2)


def _command(args: list[str]) -> str:
    words = list(itertools.takewhile(lambda a: not a.startswith("-"), args))[:2]
    return "lis " + " ".join(words) if words else "lis"


def _to_log_files(e: BaseException) -> list[str]:
    """Write the traceback to the log files the command set up; return their paths."""
    paths = []
    record = logging.LogRecord("lis.cli", logging.ERROR, __file__, 0, "unexpected error", None,
                               (type(e), e, e.__traceback__))
    for h in logging.getLogger().handlers:
        if isinstance(h, logging.FileHandler):
            try:
                h.handle(record)
                h.flush()
                paths.append(h.baseFilename)
            except Exception:  # noqa: BLE001 - a full disk must not turn the report into a traceback
                pass
    return paths


def _input_error(e: BaseException) -> str | None:
    """The message for an exception that means a bad input rather than a bug, or None."""
    import errno

    if isinstance(e, OSError) and e.errno is not None and errno.errorcode.get(e.errno) in INPUT_ERRNOS:
        what = e.strerror or str(e)
        if e.filename is not None:
            return f"cannot use {_shown(str(e.filename), 200)}: {what} (check the path)"
        return f"{what} (check the paths given)"
    if isinstance(e, UnicodeDecodeError):
        return f"an input is not UTF-8 text ({e.reason} at byte {e.start}) (give a text file)"
    if isinstance(e, json.JSONDecodeError):
        return f"an input is not valid JSON ({e.msg}: line {e.lineno} column {e.colno}) (check the file)"
    try:
        import yaml

        if isinstance(e, yaml.YAMLError):
            return f"an input is not valid YAML ({' '.join(str(e).split())[:200]}) (check the file)"
    except ImportError:  # pragma: no cover - yaml is a dependency
        pass
    return None


def unexpected(e: BaseException, args: list[str]) -> int:
    """Anything a command did not turn into a LisError: one line, the traceback to the log."""

    if isinstance(e, cancel.Interrupted):
        print("interrupted", file=sys.stderr)
        return 130
    if isinstance(e, click_exceptions.ClickException):
        return usage(e)
    if isinstance(e, click_exceptions.Exit if hasattr(click_exceptions, "Exit") else ()):  # pragma: no cover
        return int(getattr(e, "exit_code", 1))
    logs = _to_log_files(e)
    if os.environ.get("LIS_DEBUG") == "1":
        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    where = f"the traceback is in {logs[0]}" if logs else "rerun with LIS_DEBUG=1 for the traceback"
    cmd = _command(args)
    found = _input_error(e)
    if found is not None:
        return report(f"{cmd}: {found}", 2)
    detail = " ".join(str(e).split())[:300]
    return report(f"{cmd} failed: {type(e).__name__}{': ' + detail if detail else ''} "
                  f"(a bug in lis, please report it; {where})", 1)

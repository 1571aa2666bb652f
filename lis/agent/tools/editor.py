"""``str_replace_editor``: view, create, str_replace, insert — on any text file of the sandbox.

File contents travel through the sandbox's file operations (never a shell command line), so size
and path characters do not matter and CRLF survives. Unlike the official 0.2 editor, ``view`` works
on every text file (theirs refuses non-``.py``/``.rst`` files, which pushed models to ``cat``);
``agent.editor.view_extensions`` (e.g. ``[".py", ".rst"]``) restores 0.2's restriction and message.
"""
from __future__ import annotations

import shlex

from lis.agent.tools.observation import echo
from lis.sandbox.base import Sandbox

SNIPPET = 4                # lines of context around an edit
MAX_VIEW_CHARS = 16000     # a view longer than this is clipped (use view_range)
MAX_FILE_BYTES = 5 << 20   # the editor works on text files up to this size
MAX_DIR_ENTRIES = 200
PATH_MAX = 4096            # bytes, as Linux counts them (the terminating NUL included)


class EditorError(Exception):
    """An editing mistake to report to the model (the message is the observation)."""


def _numbered(lines: list[str], start: int) -> str:
    return "\n".join(f"{i:6}\t{line}" for i, line in enumerate(lines, start))


def _read_text(sb: Sandbox, path: str) -> str:
    try:
        data = sb.read_file(path, max_bytes=MAX_FILE_BYTES)
    except FileNotFoundError:
        raise EditorError(f"The path {echo(path)} does not exist. Please provide a valid path.") from None
    except IsADirectoryError:
        raise EditorError(f"The path {echo(path)} is a directory; this command needs a file.") from None
    except PermissionError:
        raise EditorError(f"Permission denied: {echo(path)}") from None
    except OSError as e:
        if e.errno == 27:
            raise EditorError(f"The file {echo(path)} is larger than {MAX_FILE_BYTES >> 20} MB; use execute_bash "
                              f"(head, sed -n, grep -n) to work on it.") from None
        raise EditorError(f"Cannot read {echo(path)}: {e.strerror}") from None
    if b"\0" in data[:8192]:
        raise EditorError(f"{echo(path)} is a binary file ({len(data)} bytes); the editor handles text files only. "
                          f"Use execute_bash (e.g. `file`, `xxd | head`) to inspect it.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise EditorError(f"{echo(path)} is not UTF-8 text ({len(data)} bytes); the editor handles UTF-8 text files "
                          f"only. "
                          f"Use execute_bash (e.g. `iconv`) to work on it.") from None


def _write_text(sb: Sandbox, path: str, text: str) -> None:
    try:
        sb.write_file(path, text.encode("utf-8"))
    except PermissionError:
        raise EditorError(f"Permission denied: {echo(path)}") from None
    except OSError as e:
        raise EditorError(f"Cannot write {echo(path)}: {e.strerror or e}") from None


def _snippet(text: str, first_line: int, n_new: int) -> str:
    lines = text.split("\n")
    lo = max(0, first_line - SNIPPET)
    hi = min(len(lines), first_line + n_new + SNIPPET)
    return _numbered(lines[lo:hi], lo + 1)


def _ext_list(exts: tuple[str, ...]) -> str:
    """(".py", ".rst") → ".py or .rst" (0.2's wording); (".py", ".rst", ".md") → ".py, .rst or .md"."""
    return exts[0] if len(exts) == 1 else f"{', '.join(exts[:-1])} or {exts[-1]}"


def view(sb: Sandbox, path: str, view_range: list[int] | None, extensions: tuple[str, ...] | None = None) -> str:
    """``cat -n`` of a file, or a directory's entries two levels deep. With ``extensions``, other
    files are refused (and left out of listings) as the official 0.2 editor does."""
    r = sb.exec(f"test -d {shlex.quote(path)} && echo dir || (test -e {shlex.quote(path)} && echo file || echo none)",
                timeout=30)
    kind = r.stdout.strip()
    if kind == "none":
        raise EditorError(f"The path {echo(path)} does not exist. Please provide a valid path.")
    if kind == "dir":
        if view_range:
            raise EditorError("view_range applies to files, not directories.")
        q = shlex.quote(path)
        only = ""
        if extensions:
            only = " \\( -type d" + "".join(f" -o -name {shlex.quote('*' + e)}" for e in extensions) + " \\)"
        r = sb.exec(f"find {q} -maxdepth 2 -not -path '*/.*'{only} | LC_ALL=C sort | head -n {MAX_DIR_ENTRIES + 1}",
                    timeout=30)
        entries = r.stdout.splitlines()
        more = "\n(more entries not shown; use execute_bash with ls or find)" if len(entries) > MAX_DIR_ENTRIES else ""
        return (f"Here are the files and directories up to 2 levels deep in {path}, excluding hidden items:\n"
                + "\n".join(entries[:MAX_DIR_ENTRIES]) + more)
    if extensions and not path.endswith(tuple(extensions)):
        raise EditorError(f"Viewing non-Python files is disallowed for saving context. "
                          f"File '{echo(path)}' is not a {_ext_list(extensions)} file.")
    text = _read_text(sb, path)
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    start, end = 1, len(lines)
    if view_range:
        if len(view_range) != 2 or not all(isinstance(x, int) for x in view_range):
            raise EditorError("view_range must be a list of two integers, e.g. [1, 40].")
        start, end = view_range
        if end == -1:
            end = len(lines)
        if not (1 <= start <= max(1, len(lines))) or not (start <= end <= len(lines)):
            raise EditorError(f"Invalid view_range {echo(str(view_range))}: the file has {len(lines)} lines; "
                              f"use 1 <= start <= end <= {len(lines)} (end -1 = to the end).")
    shown = _numbered(lines[start - 1:end], start)
    if len(shown) > MAX_VIEW_CHARS:
        shown = shown[:MAX_VIEW_CHARS] + ("\n<response clipped: the file is long. Use view_range, or execute_bash "
                                          "with `grep -n` to find the lines you need.>")
    return f"Here's the result of running `cat -n` on {path}:\n{shown}"


def create(sb: Sandbox, path: str, file_text: str | None) -> str:
    if file_text is None:
        raise EditorError("Parameter `file_text` is required for command: create.")
    existed = sb.exec(f"test -e {shlex.quote(path)}", timeout=30).exit_code == 0
    if existed and sb.exec(f"test -d {shlex.quote(path)}", timeout=30).exit_code == 0:
        raise EditorError(f"The path {echo(path)} is a directory; create needs a file path.")
    _write_text(sb, path, file_text)
    return f"File {'overwritten' if existed else 'created successfully'} at: {path}"


def str_replace(sb: Sandbox, path: str, old_str: str | None, new_str: str | None) -> str:
    if old_str is None or old_str == "":
        raise EditorError("Parameter `old_str` is required (and must not be empty) for command: str_replace.")
    new_str = new_str or ""
    text = _read_text(sb, path)
    count = text.count(old_str)
    if count == 0:
        raise EditorError(f"No replacement was performed, old_str `{echo(old_str)}` did not appear verbatim in "
                          f"{echo(path)}.")
    if count > 1:
        starts, i = [], text.find(old_str)
        while i >= 0:
            starts.append(text.count("\n", 0, i) + 1)
            i = text.find(old_str, i + 1)
        raise EditorError(f"No replacement was performed. old_str occurs {count} times in {echo(path)}, at lines "
                          f"{echo(str(starts))}. "
                          f"Please include more context so that it is unique.")
    first = text.count("\n", 0, text.find(old_str))
    new_text = text.replace(old_str, new_str, 1)
    _write_text(sb, path, new_text)
    return (f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet of {path}:\n"
            f"{_snippet(new_text, first, new_str.count(chr(10)) + 1)}\n"
            f"Review the changes and make sure they are as expected. Edit the file again if necessary.")


def insert(sb: Sandbox, path: str, insert_line: int | None, new_str: str | None) -> str:
    if insert_line is None or not isinstance(insert_line, int) or isinstance(insert_line, bool):
        raise EditorError("Parameter `insert_line` (an integer) is required for command: insert.")
    if new_str is None:
        raise EditorError("Parameter `new_str` is required for command: insert.")
    text = _read_text(sb, path)
    lines = text.split("\n")
    trailing = text.endswith("\n")
    if trailing:
        lines = lines[:-1]
    if not 0 <= insert_line <= len(lines):
        raise EditorError(f"Invalid `insert_line` {echo(str(insert_line))}: it should be within [0, {len(lines)}].")
    new_lines = new_str.split("\n")
    out = lines[:insert_line] + new_lines + lines[insert_line:]
    new_text = "\n".join(out) + ("\n" if trailing or not lines else "")
    _write_text(sb, path, new_text)
    return (f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n"
            f"{_snippet(new_text, insert_line, len(new_lines))}\n"
            f"Review the changes and make sure they are as expected (correct indentation, no duplicate lines).")


def run_editor(sb: Sandbox, args: dict, view_extensions: tuple[str, ...] | None = None) -> str:
    """Dispatch one editor call; raises EditorError with the message for the model.

    ``view_extensions``: None lets ``view`` show any text file; a tuple such as (".py", ".rst")
    limits it to those files, as the official 0.2 editor does."""
    command = args.get("command")
    path = args.get("path")
    if not isinstance(path, str) or not path:
        raise EditorError("Parameter `path` is required.")
    if not path.startswith("/"):
        raise EditorError(f"The path {echo(path)} is not an absolute path; it should start with `/` "
                          f"(e.g. /testbed/{echo(path)}).")
    if len(path) >= PATH_MAX or len(path.encode("utf-8", "surrogatepass")) >= PATH_MAX:
        raise EditorError(f"The path {echo(path)} is {len(path)} characters long; a path has at most "
                          f"{PATH_MAX - 1} bytes.")
    if "\0" in path:
        raise EditorError(f"The path {echo(repr(path))} contains a NUL character; no file name can.")
    if command == "view":
        return view(sb, path, args.get("view_range"), view_extensions)
    if command == "create":
        return create(sb, path, args.get("file_text"))
    if command == "str_replace":
        return str_replace(sb, path, args.get("old_str"), args.get("new_str"))
    if command == "insert":
        return insert(sb, path, args.get("insert_line"), args.get("new_str"))
    raise EditorError(f"Unrecognized command {echo(repr(command))}. The allowed commands are: view, create, "
                      f"str_replace, insert.")

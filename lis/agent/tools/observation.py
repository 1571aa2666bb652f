"""What the model sees after ``execute_bash``: the paper's observation format, minus its defects.

    Exit code: 0                               (failure: "Exit code: Error: Exit code 1"; timeout: "-1")
    Execution output of [execute_bash]:
    [STDOUT]
    ...
    [STDERR]                                   (only when stderr is non-empty)
    ...

As in llm-in-sandbox 0.2, a stream of more than 80 lines keeps its first and last 40 lines around
a divider. The differences (docs/differences.md): no literal backslash before ``[`` (a Rich escape
leaked into the official text), a character cap per stream, and notes naming a limit that was hit,
a restarted shell or a reclaimed sandbox.
"""
from __future__ import annotations

from lis.sandbox.base import ExecResult

DIVIDER = "-" * 50
TRUNCATED = "<Observation truncated in middle for saving context>"
ECHO_CHARS = 300  # the most of a model's own argument (a path, old_str, a name) an error message repeats


def echo(value: object, limit: int = ECHO_CHARS) -> str:
    """``value`` (a str, else its repr) as a message repeats it: whole when short, else its first
    ``limit`` characters and how many more there were (a 1 MB argument never comes back whole)."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def truncate_lines(text: str, max_lines: int = 80, keep: int = 40) -> str:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    if len(lines) <= max_lines:
        return text
    return "\n".join(lines[:keep] + [DIVIDER, TRUNCATED, DIVIDER] + lines[-keep:]) + ("\n" if text.endswith("\n") else "")


def truncate_chars(text: str, max_chars: int) -> str:
    if max_chars <= 0 or len(text) <= max_chars:
        return text
    half = max_chars // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n<... {cut} characters truncated ...>\n{text[-half:]}"


def clip(text: str, max_lines: int = 80, keep: int = 40, max_chars: int = 20000) -> str:
    """Line truncation as in the paper, then the character cap."""
    return truncate_chars(truncate_lines(text, max_lines, keep), max_chars)


def exit_code_text(r: ExecResult) -> str:
    if r.timed_out or r.exit_code is None:
        return "-1"
    return "0" if r.exit_code == 0 else f"Error: Exit code {r.exit_code}"


def bash_observation(r: ExecResult, *, timeout_s: float, max_output_bytes: int, max_lines: int = 80,
                     keep: int = 40, max_chars: int = 20000) -> str:
    stdout = r.stdout
    notes = []
    if r.reclaim_note:  # the sandbox's process limit was exhausted and sandboxd cleared it
        notes.append(r.reclaim_note)
    if r.timed_out:
        notes.append(f"The command took too long to execute (>{timeout_s:g}s) and was stopped "
                     f"(the per-command time limit).")
    if r.output_limited:
        notes.append(f"The command was stopped: it wrote more than {max_output_bytes / 1e6:.0f} MB of output "
                     f"(the per-command output limit).")
    if r.stdout_dropped or r.stderr_dropped:
        notes.append(f"({r.stdout_dropped + r.stderr_dropped} bytes in the middle of the output were dropped.)")
    if r.shell_restarted:
        notes.append("The shell was restarted: the working directory and shell variables are back to their defaults.")
    body = clip(stdout, max_lines, keep, max_chars)
    if notes:
        body = (body + ("\n" if body and not body.endswith("\n") else "") + "\n".join(notes)).lstrip("\n")
    parts = [f"Exit code: {exit_code_text(r)}", "Execution output of [execute_bash]:", "[STDOUT]", body.rstrip("\n")]
    if r.stderr:
        parts += ["[STDERR]", clip(r.stderr, max_lines, keep, max_chars).rstrip("\n")]
    return "\n".join(parts)


def editor_observation(result: str, max_chars: int = 0) -> str:
    """The editor's result as the model sees it; with ``max_chars``, capped like a bash stream
    (a snippet around a 1 MB line must not flood the context)."""
    return f"Execution output of [str_replace_editor]:\n{truncate_chars(result, max_chars)}"

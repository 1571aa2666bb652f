"""Execute one tool call in a sandbox. Every malformed call (bad JSON, unknown tool, missing
argument) becomes an error observation the model can recover from, never an exception."""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from typing import Any

from lis.agent.tools.editor import EditorError, run_editor
from lis.agent.tools.observation import bash_observation, echo, editor_observation
from lis.agent.tools.schemas import TOOL_NAMES
from lis.agent.tools.stderr_order import by_program
from lis.sandbox.base import Sandbox

FINISHED = "<<< Finished >>>"


@dataclass
class ToolSettings:
    command_timeout_s: float = 120.0
    max_output_bytes: int = 16 << 20
    max_lines: int = 80       # a stream longer than this keeps its first and last `keep` lines
    keep: int = 40
    max_chars: int = 20000    # per stream, after line truncation
    view_extensions: tuple[str, ...] | None = None  # editor view: None = any text file; (".py", ".rst") = 0.2's rule
    stderr_by_program: bool = False  # the deterministic mode: programs run at once get their stderr in a fixed order


@dataclass
class ToolOutcome:
    observation: str
    tool: str | None
    arguments: dict[str, Any] | None
    exit_code: int | None = None
    exec_time_s: float = 0.0
    done: bool = False          # submit was called
    error: str | None = None    # bad_json | bad_arguments | unknown_tool | missing_argument | editor
    timed_out: bool = False


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(arguments, error message) from a tool call's ``arguments`` (a JSON string or a dict)."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    try:
        value = json.loads(raw)
    except (ValueError, TypeError, RecursionError) as e:  # ValueError: also a number too long to convert
        return None, f"the arguments are not valid JSON ({echo(getattr(e, 'msg', None) or str(e))}); send a JSON object"
    if not isinstance(value, dict):
        return None, f"the arguments must be a JSON object, not {type(value).__name__}"
    return value, None


def execute_tool_call(sb: Sandbox, name: str | None, raw_arguments: Any, settings: ToolSettings) -> ToolOutcome:
    t0 = time.monotonic()
    if name not in TOOL_NAMES:
        return ToolOutcome(f"Error: unknown tool {echo(repr(name))}. Available tools: {', '.join(TOOL_NAMES)}.", name,
                           None, error="unknown_tool")
    args, problem = parse_arguments(raw_arguments)
    if args is None:
        return ToolOutcome(f"Error: could not run {name}: {problem}.", name, None, error="bad_json")
    if name == "submit":
        return ToolOutcome(FINISHED, name, args, done=True)
    if name == "execute_bash":
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolOutcome("Error: No command provided. Call execute_bash with a non-empty `command`.", name, args,
                               error="missing_argument")
        r = sb.exec(command, timeout=settings.command_timeout_s)
        if settings.stderr_by_program:
            r = dataclasses.replace(r, stderr=by_program(command, r.stderr))
        obs = bash_observation(r, timeout_s=settings.command_timeout_s, max_output_bytes=settings.max_output_bytes,
                               max_lines=settings.max_lines, keep=settings.keep, max_chars=settings.max_chars)
        return ToolOutcome(obs, name, args, exit_code=-1 if r.timed_out or r.exit_code is None else r.exit_code,
                           exec_time_s=time.monotonic() - t0, timed_out=r.timed_out)
    try:  # str_replace_editor
        result = run_editor(sb, args, settings.view_extensions)
        return ToolOutcome(editor_observation(result, settings.max_chars), name, args, exit_code=0,
                           exec_time_s=time.monotonic() - t0)
    except EditorError as e:
        return ToolOutcome(editor_observation(f"ERROR: {e}", settings.max_chars), name, args, exit_code=1,
                           exec_time_s=time.monotonic() - t0, error="editor")

"""The ``lis`` command line: one sub-command per pipeline stage, plus tools around them (``lis --help``
lists them, each with what it does)."""
from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import sys
from pathlib import Path

import typer
from typer.core import TyperCommand, TyperGroup

from lis.cli import boundary, stage_command
from lis.cli.options import STAGE_SECTIONS
from lis.errors import LisError
from lis.sandbox import registry
from lis.stages import registry as stage_registry
from lis.util import cancel, progress

# Every sub-command, by name: the module (and attribute) that defines it, imported only when a command
# line names it. The stage commands come from the stage registry; the tools around them are listed here.
# A group's extra sub-commands live in modules of their own, so that a stage's code (which `lis pipeline
# check` follows from the module that defines its command) does not include them.
TOOLS = {"run": "lis.cli.run:run", "serve": "lis.cli.serve:serve", "score": "lis.cli.score:score",
         "doctor": "lis.cli.doctor:doctor", "view": "lis.cli.view:view"}
GROUP_MODULES = {
    "image": "lis.cli.image", "params": "lis.cli.params", "pipeline": "lis.cli.pipeline", "sandbox": "lis.cli.sandbox",
    "bench": "lis.cli.bench", "behaviour": "lis.cli.behaviour", "efficiency": "lis.cli.efficiency",
    "eval": "lis.cli.eval", "export": "lis.cli.export", "model": "lis.cli.model", "train": "lis.cli.train",
}
TOOL_SUBCOMMANDS = {"eval": {"summary": "lis.cli.eval_summary:summary"},
                    "train": {"compare": "lis.cli.train_compare:compare"}}


def _commands() -> tuple[dict[str, str], dict[str, tuple[str, dict[str, str]]]]:
    """(top-level commands, groups): the tools, plus each stage's command from the registry —
    ``lis tasks ...`` a top-level command, ``lis train grpo ...`` a sub-command of ``train``."""
    top, sub = dict(TOOLS), {g: dict(extra) for g, extra in TOOL_SUBCOMMANDS.items()}
    for stage in stage_registry.stages():
        words = stage.command_words[1:]
        STAGE_SECTIONS.setdefault(" ".join(words), tuple(stage.params))
        if stage.entry not in GENERATED or not stage.runs:  # declared in the module its command runs
            GENERATED[stage.entry] = stage  # the command's options: its own module's stage, else the first
        if len(words) == 1:
            top[words[0]] = stage.entry
        else:
            sub.setdefault(words[0], {})[words[1]] = stage.entry
    return top, {g: (module, sub.get(g, {})) for g, module in GROUP_MODULES.items()}


GENERATED: dict = {}  # entry -> the stage whose declaration its command is made from
COMMANDS, GROUPS = _commands()


def _attr(target: str):
    if target in GENERATED:
        return stage_command.command(GENERATED[target])
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


@functools.cache
def group_app(name: str) -> typer.Typer:
    """The Typer app of the group ``name``, with its extra sub-commands attached (once)."""
    module, extra = GROUPS[name]
    sub = importlib.import_module(module).app
    for command, target in extra.items():
        sub.command(command)(_attr(target))
    return sub


def command_callback(name: str):
    """The function behind the top-level command ``name``."""
    return _attr(COMMANDS[name])


def _help_text(name: str) -> str:
    """What ``lis --help`` lists for ``name``, read from the source without importing it: the
    command function's docstring, or the group's ``typer.Typer(help=...)``."""
    module, _, func = (COMMANDS[name] if name in COMMANDS else GROUPS[name][0] + ":").partition(":")
    spec = importlib.util.find_spec(module)
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    if COMMANDS.get(name) in GENERATED:  # the stage module's ABOUT (its first paragraph), else the stage's title
        about = next((node.value.value for node in tree.body if isinstance(node, ast.Assign)
                      and [ast.unparse(t) for t in node.targets] == ["ABOUT"] and isinstance(node.value, ast.Constant)), "")
        return about.split("\n\n")[0] or stage_command.title(GENERATED[COMMANDS[name]])
    for node in ast.walk(tree):
        if func and isinstance(node, ast.FunctionDef) and node.name == func:
            return ast.get_docstring(node) or ""
        if not func and isinstance(node, ast.Call) and ast.unparse(node.func) == "typer.Typer":
            for kw in node.keywords:
                if kw.arg == "help" and isinstance(kw.value, ast.Constant):
                    return str(kw.value.value)
    return ""


class LazyGroup(TyperGroup):
    """The root group: lists every sub-command by name and imports one only when it is asked for.
    Its own help lists them from their sources' docstrings (nothing imported)."""

    _listing = False

    def list_commands(self, ctx) -> list[str]:
        return [*COMMANDS, *GROUPS]

    def format_help(self, ctx, formatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def get_command(self, ctx, cmd_name: str):
        if self._listing and cmd_name in {**COMMANDS, **GROUPS}:  # a stand-in that only has the help text
            return TyperCommand(cmd_name, help=_help_text(cmd_name))
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in GROUPS:
            command = typer.main.get_group(group_app(cmd_name))
        elif cmd_name in COMMANDS:
            single = typer.Typer(add_completion=False)
            single.command(cmd_name)(command_callback(cmd_name))
            command = typer.main.get_command(single)
        else:
            return None
        command.name = cmd_name
        self.commands[cmd_name] = command
        return command


app = typer.Typer(cls=LazyGroup,
                  help="lis — LLM-in-Sandbox (arXiv 2601.16206) reproduced as one pipeline: one sub-command per stage.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]})


@app.callback()
def _root() -> None:
    """lis — LLM-in-Sandbox (arXiv 2601.16206) reproduced as one pipeline: one sub-command per stage."""


def main(argv: list[str] | None = None) -> None:
    """Entry point (``lis``): exits with :func:`run_cli`'s status. SIGINT and SIGTERM are the same for
    every command: what runs stops (sandboxes removed, nothing new started, what finished kept), one
    line says where it got to, and the status is 130 / 143."""
    registry.install_signal_handlers()
    sys.exit(run_cli(argv))


def interrupted_line() -> str:
    """ "interrupted at <how far the work got>; run again to resume" (``lis.util.progress.at``), or the
    command's own line (``lis.util.progress.when_stopped``: a server's normal end)."""
    own = progress.stopped_line()
    if own:
        return own
    where = progress.where()
    return f"interrupted{f' at {where}' if where else ''}; run again to resume"


@functools.cache
def _command():
    """The click command tree of ``app``, built once per process (typer reads every command's
    signature to build it, which each in-process run_cli would pay again)."""
    return typer.main.get_command(app)


def run_cli(argv: list[str] | None = None) -> int:
    """Run one command line through the CLI's error boundary and return its exit status.

    Whatever escapes a command ends as ONE line on stderr, ``error: ...``: status 2 for bad input
    (a wrong option or param, a path that cannot be read or written, a file that is not what it
    should be: :class:`LisError` and the errors of reading an input), status 1 for a bug in lis. The
    traceback goes to the stage's log file (``--log``), and to the terminal with ``LIS_DEBUG=1``.
    A signal (SIGINT, SIGTERM) ends it with 128 + the signal's number and one line
    (:func:`interrupted_line`), whatever the command raised on its way out (Lightning's exit 1 on
    Ctrl-C, its exit 0 on SIGTERM).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    command = _command()
    bad = boundary.unusable_argument(args) or boundary.unwritable_output(command, args)
    if bad:
        return boundary.report(bad, 2)
    try:
        code = boundary.exit_code(command.main(args=args, prog_name="lis", standalone_mode=False))
    except LisError as e:
        if cancel.signal_number() is None:
            return boundary.report(e.one_line(), 2)
        code = 2
    except boundary.click_exceptions.ClickException as e:
        return boundary.usage(e)
    except typer.Abort:
        return boundary.report("aborted", 1)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except KeyboardInterrupt:
        code = 130
    except BaseException as e:  # noqa: BLE001 - the boundary: nothing escapes as a traceback
        if cancel.signal_number() is None:
            return boundary.unexpected(e, args)
        code = 1
    signum = cancel.signal_number()
    if signum is not None or code == 130 or cancel.requested():  # Ctrl-C or SIGTERM: a prompt exit
        if signum is not None or code == 130:
            code = 128 + (signum or 2)
            print(interrupted_line(), file=sys.stderr)
        registry.hard_exit(code)  # worker threads blocked in a model call must not hold the exit
    return code

"""Readable logs per stage: rich output on the terminal, plain lines in the stage's log file."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

from rich.console import Console
from rich.logging import RichHandler

console = Console(stderr=True)
_FMT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def setup_logging(log_file: str | Path | None = None, verbose: bool = False) -> None:
    """Log to stderr (rich when interactive) and, if given, append plain lines to ``log_file``."""
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    if console.is_terminal:
        term: logging.Handler = RichHandler(console=console, show_path=False, markup=False, rich_tracebacks=False)
        term.setFormatter(logging.Formatter("%(message)s"))
    else:
        term = logging.StreamHandler(sys.stderr)
        term.setFormatter(logging.Formatter(_FMT, "%H:%M:%S"))
    root.addHandler(term)
    if log_file:
        path = Path(log_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = logging.FileHandler(path, mode="a", encoding="utf-8")
        fh.setFormatter(logging.Formatter(_FMT))
        fh.setLevel(logging.DEBUG)
        root.addHandler(fh)
    for noisy in ("urllib3", "docker", "filelock", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def note(logger: logging.Logger, message: str) -> None:
    """A note for a person: logged at INFO on the terminal when stderr is one, and always in the stage's log
    file (``--log``); a run whose stderr a program reads (a pipe) gets only the file's copy."""
    if console.is_terminal:
        logger.info(message)
        return
    record = logger.makeRecord(logger.name, logging.INFO, "", 0, message, None, None)
    for h in logging.getLogger().handlers:
        if isinstance(h, logging.FileHandler):
            h.handle(record)

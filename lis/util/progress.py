"""Progress of long work: a rich bar on a terminal, a log line every ~5% otherwise (stage logs)."""
from __future__ import annotations

import logging
import time

from lis.util.log import console

log = logging.getLogger("lis.progress")
_where: list[str] = []  # how far the long work of this process got (what "interrupted at ..." names)


def at(text: str) -> None:
    """Note how far the work got ("step 120/3000", "episode 12/64"): an interrupted command says it."""
    _where[:] = [text]


def where() -> str | None:
    return _where[0] if _where else None


_stopped: list = []  # what a command says when a signal stops it, instead of "interrupted ...; run again to resume"


def when_stopped(line) -> None:
    """``line()`` is what this process says when a signal stops it: for a command whose normal end is a
    signal (a server), "interrupted; run again to resume" would be wrong."""
    _stopped[:] = [line]


def stopped_line() -> str | None:
    return _stopped[0]() if _stopped else None


class Progress:
    def __init__(self, name: str, total: int, done: int = 0, fields: tuple[str, ...] = ()):
        self.name, self.total, self.done = name, total, done
        self.t0 = time.monotonic()
        self.start_done = done
        self.bar = None
        self.fields = {f: "-" for f in fields}
        if console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            cols = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn()]
            cols += [TextColumn(f"{f} {{task.fields[{f}]}}") for f in fields]
            self.bar = RichProgress(*cols, TimeRemainingColumn(), console=console)
            self.bar.start()
            self.task = self.bar.add_task(name, total=total, completed=done, **self.fields)

    def advance(self, n: int = 1, **fields) -> None:
        self.done += n
        at(f"{self.name} {self.done}/{self.total}")
        self.fields.update({k: str(v) for k, v in fields.items()})
        if self.bar:
            self.bar.update(self.task, completed=self.done, **self.fields)
        elif self.total and (self.done == self.total or self.done % max(1, self.total // 20) == 0):
            rate = (time.monotonic() - self.t0) / max(1, self.done - self.start_done)
            extra = "".join(f", {k} {v}" for k, v in self.fields.items())
            log.info("%s: %d/%d%s, ETA %.0fs", self.name, self.done, self.total, extra, rate * (self.total - self.done))

    def close(self) -> None:
        if self.bar:
            self.bar.stop()
            self.bar = None

"""`lis bench time`: the wall time of a whole command, into a results file.

    record, path = time_command("make test", ["make", "test"], root, out_dir)

The command runs as a child with this terminal (its output is not captured). An interrupted
command records nothing.
"""
from __future__ import annotations

import resource
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from lis.bench import results
from lis.errors import LisError


def time_command(name: str, argv: list[str], root: Path, out_dir: Path) -> tuple[dict[str, Any], Path]:
    """Run ``argv`` (in the current folder) and write its results file; return the record and its path."""
    if not argv:
        raise LisError("no command to time", 'give it after --: lis bench time --name "make test" -- make test')
    if shutil.which(argv[0]) is None:
        raise LisError(f"command not found: {argv[0]}", "give a program on PATH or a path to one")
    record = results.header(root, "time")
    here = Path.cwd().resolve()
    record.update({"name": name, "command": argv,
                   "cwd": here.relative_to(root.resolve()).as_posix() if here.is_relative_to(root.resolve()) else str(here)})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv)
    try:
        rc = proc.wait()
    except BaseException:
        proc.wait()
        raise
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    record.update({"wall_s": round(wall, 1), "rc": rc,
                   "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1)})
    path = results.new_path(out_dir, record)
    results.write(path, results.finish(record))
    return record, path

"""Run a subprocess with a deadline, its output streamed line by line into the stage log."""
from __future__ import annotations

import collections
import logging
import os
import signal
import subprocess
import threading
import time
from typing import Sequence

from lis.errors import LisError

log = logging.getLogger(__name__)


def run_logged(cmd: Sequence[str], *, timeout: float, what: str, env: dict | None = None,
               cwd: str | None = None, logger: logging.Logger = log) -> None:
    """Run ``cmd``, every output line to ``logger.debug``. On a non-zero exit or after ``timeout``
    seconds (the process group is killed) raise LisError naming ``what`` and quoting the last lines."""
    tail: collections.deque[str] = collections.deque(maxlen=8)
    full_env = None if env is None else {**os.environ, **env}
    proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=full_env, cwd=cwd,
                            start_new_session=True, text=True, errors="replace", bufsize=1)

    def pump():
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            if line:
                tail.append(line)
                logger.debug("%s", line)

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise LisError(f"{what} took longer than {timeout:.0f}s and was killed",
                               "raise the timeout param or look at the stage log")
            time.sleep(0.1)
    except BaseException:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        raise
    finally:
        t.join(timeout=5)
    if proc.returncode != 0:
        last = " | ".join(tail) or "no output"
        raise LisError(f"{what} failed with exit code {proc.returncode}: {last[-400:]}",
                       "the stage log has the full output")

"""The journal of one job: every episode, appended (fsynced) the moment it ends, and its scores.

It survives kills and re-runs (Snakemake and DVC delete a job's declared outputs before running
it again), so a re-run repeats no finished episode. Two files per job:

* ``<mode>.jsonl`` — episodes, keyed by what makes an episode (the job's settings hash, the
  task's content hash, task id, repeat and mode). An episode that *finished* (the model answered,
  or ran out of turns, tokens or time: its own doing) is kept; one that ended in an infrastructure
  error (model server, sandbox, harness) is an error, retried on later runs until it has been
  tried ``max_attempts`` times; an ``interrupted`` one (Ctrl-C) is retried and never counted.
* ``<mode>.scores.jsonl`` — scores, keyed by the episode's id and the scoring hash (scorer
  settings and scorer code version): changing a scorer re-scores every episode without running
  one again.

``lock()`` makes a job one run at a time: a second ``lis eval run`` of the same job refuses
(naming the process that holds it) or waits.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from lis.agent.trajectory import Trajectory, append_jsonl, read_jsonl
from lis.errors import LisError

# Endings that are the model's doing: kept and scored.
FINISHED = frozenset({"submitted", "max_turns", "token_budget", "timeout", "answered", "truncated"})
# Endings that are not the model's doing: errors, excluded from accuracy, retried up to max_attempts.
INFRA = frozenset({"model_error", "sandbox_error", "error"})
INTERRUPTED = "interrupted"


@dataclass
class JournalState:
    """What the journal holds for one settings hash."""

    finished: dict[str, Trajectory] = field(default_factory=dict)      # key → the finished episode
    failures: dict[str, list[Trajectory]] = field(default_factory=dict)  # key → its error records (no finish yet)

    def attempts(self, key: str) -> int:
        return len(self.failures.get(key, ()))


class Journal:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.scores_path = self.path.with_name(self.path.stem + ".scores.jsonl")
        self.lock_path = self.path.with_name(self.path.stem + ".lock")

    # -- episodes -------------------------------------------------------------------------------
    def state(self, settings_hash: str, task_hashes: dict[str, str] | None = None) -> JournalState:
        """Episodes recorded under ``settings_hash`` (and, when ``task_hashes`` maps a task id to its
        content hash, under the task's current content: an edited task runs again)."""
        st = JournalState()
        for d in read_jsonl(self.path):
            if d.get("params_hash") != settings_hash:
                continue
            if task_hashes is not None and d.get("task_hash") != task_hashes.get(d.get("task_id")):
                continue
            rec = Trajectory.from_dict(d)
            if rec.termination in FINISHED:
                st.finished[rec.key] = rec
                st.failures.pop(rec.key, None)
            elif rec.termination in INFRA and rec.key not in st.finished:
                st.failures.setdefault(rec.key, []).append(rec)
        return st

    def append(self, rec: Trajectory) -> None:
        """Record an episode, whatever its ending (the reward lives in the scores file)."""
        d = rec.to_dict()
        d["reward"], d["score"] = None, None
        append_jsonl(self.path, d)

    # -- scores ---------------------------------------------------------------------------------
    def scores(self, scoring_hash: str) -> dict[str, dict[str, Any]]:
        """episode id → {"reward", "score"} of the scores recorded under ``scoring_hash``."""
        out = {}
        for d in read_jsonl(self.scores_path):
            if d.get("scoring_hash") == scoring_hash and d.get("episode_id"):
                out[d["episode_id"]] = {"reward": d.get("reward"), "score": d.get("score")}
        return out

    def append_score(self, episode_id: str, scoring_hash: str, reward: float, score: dict[str, Any]) -> None:
        append_jsonl(self.scores_path, {"episode_id": episode_id, "scoring_hash": scoring_hash, "reward": reward,
                                        "score": score,
                                        "scored_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")})

    # -- one run per job ------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, job_name: str, wait: bool = False, poll_s: float = 0.5) -> Iterator[None]:
        """Hold the job's lock for the block. Another process holding it → LisError naming it, or,
        with ``wait``, block until it is free. The lock is the kernel's (flock): a killed holder
        releases it."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            announced = False
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    holder = _holder(self.lock_path)
                    if not wait:
                        raise LisError(f"job {job_name} is already being run by {holder}",
                                       f"wait for it to finish, or pass --wait (lock file {self.lock_path})") from None
                    if not announced:
                        print(f"job {job_name} is being run by {holder}; waiting for it to finish", file=sys.stderr)
                        announced = True
                    time.sleep(poll_s)
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "argv": sys.argv,
                                     "since_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")})
                     .encode())
            os.fsync(fd)
            yield
        finally:
            os.close(fd)  # releases the lock


def _holder(lock_path: Path) -> str:
    try:
        d = json.loads(lock_path.read_text() or "{}")
    except (OSError, json.JSONDecodeError):
        d = {}
    if not d:
        return "another process"
    cmd = " ".join(Path(a).name if i == 0 else a for i, a in enumerate(d.get("argv") or []))
    return f"process {d.get('pid')} on {d.get('host')} since {d.get('since_utc')} ({cmd})"

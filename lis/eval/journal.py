"""The journal of one job: every episode, appended (fsynced) the moment it ends, and its scores.

It survives kills and re-runs (Snakemake and DVC delete a job's declared outputs first), so a re-run
repeats no finished episode. Two files per job:

* ``<mode>.jsonl`` — episodes, keyed by the job's settings hash, the task's content hash, task id,
  repeat and mode. A *finished* episode (the model answered, or ran out of turns, tokens or time) is
  kept; an infrastructure error is retried on later runs until tried ``max_attempts`` times; an
  ``interrupted`` one (Ctrl-C) is retried and never counted.
* ``<mode>.scores.jsonl`` — scores, keyed by the episode's id and the scoring hash: a changed scorer
  re-scores every episode without running one again.

``lock()`` makes a job one run at a time: a second run of the same job refuses (naming the holder)
or waits.

Torn writes and bad lines never break a job. Each record is one ``os.write`` of the whole line, fsynced;
a write that fails part-way is cut back. On first use, under the job's lock, each file is checked: a
line that is not UTF-8, not JSON or not a JSON object, and a torn last line, is moved to
``<file>.corrupt`` with one warning, and the run goes on (a torn record's episode runs again).
"""
from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import json
import logging
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

# the endings, re-exported for the runner and the metrics
from lis.agent.trajectory import FINISHED, INFRA, INTERRUPTED, Trajectory  # noqa: F401
from lis.util.text import tolerant
from lis.errors import LisError

log = logging.getLogger(__name__)


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
        self._mu = threading.Lock()          # appends from the job's worker threads, one at a time
        self._checked: set[Path] = set()     # files repaired since this object was made

    # -- episodes -------------------------------------------------------------------------------
    def state(self, settings_hash: str, task_hashes: dict[str, str] | None = None) -> JournalState:
        """Episodes recorded under ``settings_hash`` (and, when ``task_hashes`` maps a task id to its
        content hash, under the task's current content: an edited task runs again)."""
        st = JournalState()
        for n, d in self._records(self.path):
            if d.get("params_hash") != settings_hash:
                continue
            if task_hashes is not None and d.get("task_hash") != task_hashes.get(d.get("task_id")):
                continue
            try:
                rec = Trajectory.from_dict(d, where=f"journal {self.path} line {n}")
            except Exception as e:  # noqa: BLE001 - a JSON object of the wrong shape: as if absent
                log.warning("journal %s: line %d is not an episode record (%s: %s); ignored, its episode runs "
                            "again", self.path, n, type(e).__name__, str(e)[:200])
                continue
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
        self._append(self.path, d)

    # -- scores ---------------------------------------------------------------------------------
    def scores(self, scoring_hash: str) -> dict[str, dict[str, Any]]:
        """episode id → {"reward", "score"} of the scores recorded under ``scoring_hash``."""
        out = {}
        for _, d in self._records(self.scores_path):
            if d.get("scoring_hash") == scoring_hash and d.get("episode_id"):
                out[d["episode_id"]] = {"reward": d.get("reward"), "score": d.get("score")}
        return out

    def append_score(self, episode_id: str, scoring_hash: str, reward: float, score: dict[str, Any]) -> None:
        self._append(self.scores_path, {"episode_id": episode_id, "scoring_hash": scoring_hash, "reward": reward,
                                        "score": score,
                                        "scored_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")})

    # -- the files: tolerant reads, untearable appends ----------------------------------------------
    def corrupt_path(self, path: Path | None = None) -> Path:
        """Where the bad lines of ``path`` (default: the episodes file) are set aside."""
        path = Path(path or self.path)
        return path.with_name(path.name + ".corrupt")

    def _records(self, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, record) of every good line of ``path``, after setting its bad lines aside (line by
        line: a journal is never held whole in memory)."""
        with self._mu:
            self._check(path)
        try:
            f = open(path, "rb")
        except FileNotFoundError:
            return
        with f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    d, _ = _parse(line)
                    if d is not None:  # a bad line here was written after the check: skipped, never fatal
                        yield n, d

    def _append(self, path: Path, record: dict[str, Any]) -> None:
        """Append ``record`` as one write of the whole line, fsynced; a write that fails part-way (disk
        full) is cut back before the error is raised."""
        data = tolerant(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        with self._mu:
            self._check(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                start = os.fstat(fd).st_size
                if start and os.pread(fd, 1, start - 1) != b"\n":  # torn since the check: set it aside
                    os.close(fd)
                    fd = -1
                    self._repair(path)
                    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
                    start = os.fstat(fd).st_size
                try:
                    written = os.write(fd, data)
                    while written < len(data):  # a regular file takes it whole unless the disk is full
                        n = os.write(fd, data[written:])
                        if n <= 0:
                            raise OSError(errno.EIO, f"short write to {path}")
                        written += n
                    os.fsync(fd)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, start)
                        os.fsync(fd)
                    raise
            finally:
                if fd >= 0:
                    os.close(fd)

    def _check(self, path: Path) -> None:
        """Repair ``path`` once per Journal (the caller holds ``_mu``; the job holds ``lock()``)."""
        if path not in self._checked:
            self._repair(path)
            self._checked.add(path)

    def _repair(self, path: Path) -> None:
        """Move the bad lines of ``path`` (a torn last line too) to its ``.corrupt`` file, with one warning;
        a file with none is left untouched."""
        try:
            f = open(path, "rb")
        except FileNotFoundError:
            return
        bad: list[tuple[int, bytes, str]] = []
        size = last_start = n = 0
        last = b""
        with f:
            for n, line in enumerate(f, 1):
                last_start, last = size, line
                size += len(line)
                body = line.removesuffix(b"\n")
                if not body.strip():
                    continue
                d, why = _parse(body)
                if d is None:
                    bad.append((n, body, why if line.endswith(b"\n") else f"torn last line: no newline, {why}"))
        n_lines = n
        torn = bool(last) and not last.endswith(b"\n")
        if not bad:
            if torn:  # a whole record that lost only its newline: kept, and ended
                with open(path, "ab") as f:
                    f.write(b"\n")
                    f.flush()
                    os.fsync(f.fileno())
            return
        corrupt = self.corrupt_path(path)
        with open(corrupt, "ab") as f:
            for _, body, _ in bad:
                f.write(body + b"\n")
            f.flush()
            os.fsync(f.fileno())
        if len(bad) == 1 and torn and bad[0][0] == n_lines:  # only a torn tail: cut it off in place
            fd = os.open(path, os.O_RDWR)
            try:
                os.ftruncate(fd, last_start)
                os.fsync(fd)
            finally:
                os.close(fd)
        else:  # lines in the middle: copy the good ones to a new file and swap it in
            skip = {n for n, _, _ in bad}
            tmp = path.with_name(f".{path.name}.{os.getpid()}.repair")
            with open(path, "rb") as src, open(tmp, "wb") as dst:
                for n, line in enumerate(src, 1):
                    if n not in skip and line.strip():
                        dst.write(line if line.endswith(b"\n") else line + b"\n")
                dst.flush()
                os.fsync(dst.fileno())
            os.replace(tmp, path)
            with contextlib.suppress(OSError):
                dfd = os.open(path.parent, os.O_RDONLY)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)
        what = "; ".join(f"line {n}: {why}" for n, _, why in bad[:3]) + (" ..." if len(bad) > 3 else "")
        log.warning("journal %s: %d bad line(s) set aside in %s (%s); the run goes on (an episode whose "
                    "record was lost runs again)", path, len(bad), corrupt.name, what)

    # -- one run per job ------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, job_name: str, wait: bool = False, poll_s: float = 0.5) -> Iterator[None]:
        """Hold the job's lock (flock: a killed holder releases it) for the block. Another process holding
        it → LisError naming it, or, with ``wait``, block until it is free."""
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


def _parse(line: bytes) -> tuple[dict[str, Any] | None, str]:
    """(the record, "") of one journal line, or (None, why it is not one)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 (byte {e.start})"
    try:
        d = json.loads(text)
    except ValueError as e:  # JSONDecodeError, or a number too long to convert
        return None, f"not JSON ({getattr(e, 'msg', None) or str(e)[:80]})"
    if not isinstance(d, dict):
        return None, f"not a JSON object ({type(d).__name__})"
    return d, ""


def _holder(lock_path: Path) -> str:
    try:
        d = json.loads(lock_path.read_bytes() or b"{}")
    except (OSError, ValueError):  # unreadable, not UTF-8, not JSON
        d = {}
    if not isinstance(d, dict) or not d:
        return "another process"
    argv = d.get("argv") if isinstance(d.get("argv"), list) else []
    cmd = " ".join(Path(str(a)).name if i == 0 else str(a) for i, a in enumerate(argv))
    return f"process {d.get('pid')} on {d.get('host')} since {d.get('since_utc')} ({cmd})"

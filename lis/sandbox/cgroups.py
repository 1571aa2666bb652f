"""Memory, CPU and pids limits for Docker-less sandboxes, through a cgroup we may write to.

cgroup v2: a child of our own cgroup when it is delegated to us (or root); cgroup v1:
``<controller>/lis/<name>`` (root). When neither is writable the caller falls back to rlimits, which it
must report: they bound a process, not the sandbox.
"""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from lis.sandbox import sandboxd

log = logging.getLogger(__name__)
ROOT = Path("/sys/fs/cgroup")


def _v2() -> bool:
    return (ROOT / "cgroup.controllers").is_file()


def _own_v2_cgroup() -> Path:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return ROOT / line[3:].lstrip("/")
    return ROOT


def _writable(p: Path) -> bool:
    return p.is_dir() and os.access(p, os.W_OK)


class Cgroup:
    """One sandbox's cgroup(s). ``enter()`` runs in the child before exec (Popen preexec_fn)."""

    def __init__(self, name: str, memory_mb: int, cpus: float, pids: int):
        self.name, self.memory_mb, self.cpus, self.pids = name, memory_mb, cpus, pids
        self.dirs: list[Path] = []
        self.kind = "none"

    @staticmethod
    def available() -> str:
        """'v2', 'v1' or '' (no writable cgroup hierarchy)."""
        if _v2():
            return "v2" if _writable(_own_v2_cgroup()) else ""
        return "v1" if all(_writable(ROOT / c) for c in ("memory", "pids", "cpu")) else ""

    def create(self) -> bool:
        kind = self.available()
        try:
            if kind == "v2":
                d = _own_v2_cgroup() / f"lis-{self.name}"
                d.mkdir()
                self.dirs = [d]
                (d / "memory.max").write_text(str(self.memory_mb << 20))
                if (d / "memory.swap.max").exists():
                    (d / "memory.swap.max").write_text("0")
                (d / "pids.max").write_text(str(self.pids))
                (d / "cpu.max").write_text(f"{int(self.cpus * 100000)} 100000")
            elif kind == "v1":
                for ctrl in ("memory", "pids", "cpu"):
                    d = ROOT / ctrl / "lis" / self.name
                    d.mkdir(parents=True)
                    self.dirs.append(d)
                mem, pids, cpu = self.dirs
                (mem / "memory.limit_in_bytes").write_text(str(self.memory_mb << 20))
                if (mem / "memory.memsw.limit_in_bytes").exists():
                    (mem / "memory.memsw.limit_in_bytes").write_text(str(self.memory_mb << 20))
                (pids / "pids.max").write_text(str(self.pids))
                (cpu / "cpu.cfs_period_us").write_text("100000")
                (cpu / "cpu.cfs_quota_us").write_text(str(int(self.cpus * 100000)))
            else:
                return False
        except OSError as e:
            log.warning("cannot create cgroup %s (%s): limits fall back to rlimits", self.name, e)
            self.remove()
            return False
        self.kind = kind
        return True

    def oom_kills(self) -> int | None:
        """How many processes the kernel killed in the cgroup for want of memory (``oom_kill`` of
        memory.events, v2, or memory.oom_control, v1), or None when it cannot be read."""
        if not self.dirs:
            return None
        return sandboxd.oom_kills([self.dirs[0] / f for f in ("memory.events", "memory.oom_control")])

    def enter(self) -> None:
        """Move the calling process into the cgroup(s) (called in the child before exec)."""
        for d in self.dirs:
            (d / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self) -> None:
        """Kill what is left inside and remove the cgroup(s); never raises."""
        for d in self.dirs:
            for _ in range(50):
                try:
                    procs = (d / "cgroup.procs").read_text().split()
                except OSError:
                    break
                if not procs:
                    break
                for pid in procs:
                    try:
                        os.kill(int(pid), 9)
                    except OSError:
                        pass
                time.sleep(0.02)
            try:
                d.rmdir()
            except OSError:
                pass
        self.dirs = []

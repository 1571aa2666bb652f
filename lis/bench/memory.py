"""Memory of one sandbox, idle and busy, read from its memory cgroup (``lis bench memory``).

For each of n fresh sandboxes in turn (one at a time, so that none competes with another):
``idle`` (after ``settle_s``), ``busy_peak`` (sampled every ``interval_s`` while
:data:`BUSY_SCRIPT` runs), ``busy_cgroup_peak`` (the cgroup's high-water mark, page cache
included) and ``busy_after``. The quantities and the working set (usage − inactive file cache, as
``docker stats``) are defined in docs/efficiency.md.

The cgroup is read on the host: the directory of the sandbox's first process (/proc/<pid>/cgroup)
for a Docker container, the sandbox's own cgroup for bubblewrap. Where the host's cgroup files
cannot be read (a remote Docker engine), Docker's stats API is the fallback (about one sample a
second, no high-water mark on cgroup v2).
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Callable

from lis.analysis.efficiency_stats import rounded, t_interval
from lis.errors import LisError
from lis.sandbox.base import Sandbox, SandboxConfig
from lis.sandbox.factory import make_sandbox

CGROUP_ROOT = Path("/sys/fs/cgroup")
MIB = 2 ** 20

# What an agent typically runs in the sandbox: the scientific stack imported and used on modest data.
BUSY_SCRIPT = """\
import numpy as np, scipy.linalg, scipy.integrate, scipy.optimize, sympy, pandas as pd
rng = np.random.default_rng(0)
a = rng.standard_normal((1000, 1000))
x = scipy.linalg.solve(a, a.sum(axis=1))                      # a linear system
spec = np.abs(np.fft.rfft(rng.standard_normal(1 << 20)))       # a spectrum
q, _ = scipy.integrate.quad(lambda t: np.exp(-t * t), -np.inf, np.inf)
root = scipy.optimize.brentq(lambda t: t ** 3 - 2 * t - 5, 2, 3)
s = sympy.Symbol("s")
expr = sympy.integrate(sympy.sin(s) ** 2, s) + sympy.Add(*sympy.solve(s ** 2 - 3 * s + 2, s))
df = pd.DataFrame(rng.standard_normal((200_000, 5)), columns=list("abcde"))
stats = df.groupby((df.a > 0).astype(int)).agg(["mean", "std"])
print(round(float(x.sum()), 6), round(q, 6), round(root, 6), expr, stats.shape)
"""
BUSY_DESCRIPTION = ("python3: numpy/scipy/sympy/pandas imported; a 1000x1000 linear solve, an FFT of 2^20 "
                    "points, a quadrature, a root, a symbolic integral and equation, a 200k x 5 pandas group-by")


class CgroupMemory:
    """Reads one memory cgroup's usage, working set and high-water mark from the host's files."""

    def __init__(self, folder: Path, version: str):
        self.folder, self.version = folder, version

    @property
    def source(self) -> str:
        return f"cgroup {self.version} ({self.folder})"

    def _int(self, name: str) -> int:
        return int((self.folder / name).read_text().split()[0])

    def usage(self) -> int:
        return self._int("memory.usage_in_bytes" if self.version == "v1" else "memory.current")

    def _stat(self) -> dict[str, int]:
        out = {}
        for line in (self.folder / "memory.stat").read_text().splitlines():
            k, _, v = line.partition(" ")
            if v.strip().isdigit():
                out[k] = int(v)
        return out

    def working_set(self) -> int:
        usage, st = self.usage(), self._stat()
        inactive = st.get("total_inactive_file", st.get("inactive_file", 0)) if self.version == "v1" \
            else st.get("inactive_file", 0)
        return max(0, usage - inactive)

    def peak(self) -> int | None:
        name = "memory.max_usage_in_bytes" if self.version == "v1" else "memory.peak"
        try:
            return self._int(name)
        except (OSError, ValueError):
            return None


class DockerStatsMemory:
    """The fallback: Docker's stats API (a remote engine; about one call a second)."""

    source = "docker stats API"

    def __init__(self, sb: Sandbox):
        self._api, self._id = sb.container.client.api, sb.container.id

    def _mem(self) -> dict[str, Any]:
        return self._api.stats(self._id, stream=False).get("memory_stats", {})

    def working_set(self) -> int:
        m = self._mem()
        st = m.get("stats", {})
        return max(0, int(m.get("usage", 0)) - int(st.get("total_inactive_file", st.get("inactive_file", 0))))

    def peak(self) -> int | None:
        v = self._mem().get("max_usage")
        return int(v) if v else None


def _docker_cgroup(sb: Sandbox) -> CgroupMemory | None:
    try:
        sb.container.reload()
        pid = int(sb.container.attrs["State"]["Pid"])
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except (OSError, KeyError, ValueError, TypeError):
        return None
    for line in lines:  # v1: "4:memory:/docker/<id>"
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            folder = CGROUP_ROOT / "memory" / path.lstrip("/")
            return CgroupMemory(folder, "v1") if (folder / "memory.usage_in_bytes").is_file() else None
    for line in lines:  # v2: "0::/system.slice/docker-<id>.scope"
        if line.startswith("0::"):
            folder = CGROUP_ROOT / line[3:].lstrip("/")
            return CgroupMemory(folder, "v2") if (folder / "memory.current").is_file() else None
    return None


def memory_reader(sb: Sandbox):
    """The best reader of ``sb``'s memory: its cgroup's files on this host, else Docker's stats API;
    None when neither exists (bubblewrap without a writable cgroup: rlimits only)."""
    backend = sb.config.backend
    if backend == "docker":
        return _docker_cgroup(sb) or DockerStatsMemory(sb)
    cg = getattr(sb, "cgroup", None)
    if cg is not None and cg.kind in ("v1", "v2") and cg.dirs:
        return CgroupMemory(cg.dirs[0], cg.kind)  # v1: the memory controller's folder comes first
    return None


class _Sampler(threading.Thread):
    """Polls the working set until stopped; keeps the highest value."""

    def __init__(self, reader, interval_s: float):
        super().__init__(daemon=True)
        self.reader, self.interval_s = reader, interval_s
        self.peak, self.samples = 0, 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while True:
            try:
                self.peak = max(self.peak, self.reader.working_set())
                self.samples += 1
            except (OSError, ValueError):
                pass  # the cgroup went away: the sandbox is closing
            if self._stop_event.wait(self.interval_s):
                return

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)


def measure_one(config: SandboxConfig, *, settle_s: float = 2.0, interval_s: float = 0.02,
                script: str = BUSY_SCRIPT, timeout_s: float = 300.0) -> dict[str, Any]:
    """Idle and busy memory of one fresh sandbox (bytes, seconds). Raises LisError when the sandbox's
    memory cannot be read or the workload fails."""
    with make_sandbox(config).start() as sb:
        reader = memory_reader(sb)
        if reader is None:
            raise LisError(f"cannot read the memory of a {config.backend} sandbox (no cgroup it can use)",
                           "measure with the docker backend, or run as root / with a delegated cgroup")
        time.sleep(settle_s)
        idle = reader.working_set()
        sb.write_file("/tmp/lis_busy.py", script)
        sampler = _Sampler(reader, interval_s)
        sampler.start()
        t0 = time.perf_counter()
        try:
            r = sb.exec("python3 /tmp/lis_busy.py", timeout=timeout_s)
        finally:
            sampler.stop()
        busy_s = time.perf_counter() - t0
        if r.timed_out or r.reason in ("timeout", "stuck"):
            raise LisError(f"the busy workload did not finish within {timeout_s:.0f} s in the sandbox "
                           f"(limits: {sb.config.limits.cpus} CPU); the machine is too loaded for a memory measurement",
                           "run `lis bench memory` again when the machine is quieter")
        if r.exit_code != 0:
            raise LisError(f"the busy workload failed in the sandbox (exit {r.exit_code}): "
                           f"{' '.join((r.stderr or r.stdout).split())[-300:]}",
                           "the image needs numpy, scipy, sympy and pandas (images/sandbox/requirements.txt)")
        after = reader.working_set()
        return {"idle": idle, "busy_peak": max(sampler.peak, after), "busy_cgroup_peak": reader.peak(),
                "busy_after": after, "busy_s": busy_s, "samples": sampler.samples, "source": reader.source,
                "output": r.stdout.strip()[-200:]}


def measure_memory(config: SandboxConfig, *, n: int = 3, settle_s: float = 2.0, interval_s: float = 0.02,
                   script: str = BUSY_SCRIPT, progress: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Idle and busy memory over ``n`` fresh sandboxes, one at a time: per quantity the values (MiB),
    their mean, n and a 95% Student-t interval."""
    if n < 1:
        raise LisError(f"memory measurement needs at least one sandbox (got n={n})", "pass --n 1 or more")
    runs = []
    for i in range(n):
        progress(f"memory of sandbox {i + 1}/{n}")
        runs.append(measure_one(config, settle_s=settle_s, interval_s=interval_s, script=script))

    def summary(key: str, scale: float = MIB, digits: int = 1) -> dict[str, Any] | None:
        vals = [r[key] / scale for r in runs if r[key] is not None]
        if not vals:
            return None
        s = t_interval(vals)
        return {"mean": rounded(s["mean"], digits), "ci95": rounded(s["ci95"], digits), "n": s["n"],
                "values": rounded(vals, digits)}

    return {
        "schema": "lis.bench.memory/1",
        "backend": config.backend, "image": config.image or config.rootfs,
        "memory_limit_mib": config.limits.memory_mb,
        "source": runs[0]["source"], "n": n, "settle_s": settle_s, "sample_interval_s": interval_s,
        "workload": {"description": BUSY_DESCRIPTION if script == BUSY_SCRIPT else "custom script",
                     "script": script, "output": runs[0]["output"]},
        "definitions": "docs/efficiency.md#memory",
        "idle_mib": summary("idle"),
        "busy_peak_mib": summary("busy_peak"),
        "busy_cgroup_peak_mib": summary("busy_cgroup_peak"),
        "busy_after_mib": summary("busy_after"),
        "busy_s": summary("busy_s", 1.0, 3),
        "samples_per_run": [r["samples"] for r in runs],
    }

"""Results files: one JSON file per benchmark run or timed command, kept in git under ``benchmarks/``.

    path = write(root, record)            # benchmarks/2026-11-29T0102Z-b156a04.json (or ...-make-test.json)
    records = read_all(root / "benchmarks")   # every results file, oldest first

A record says where and when it was measured (``machine``, ``commit``, ``dirty``, ``started`` and
the load average before and after: other work on a shared machine skews every number), and holds a
benchmark run's numbers and checks (``kind: "bench"``) or a timed command's wall time and status
(``kind: "time"``). The docs' tables are rendered from these files, never typed.
"""
from __future__ import annotations

import json
import os
import platform
import re
import time
from pathlib import Path
from typing import Any

from lis import layout
from lis.errors import LisError
from lis.manifest import git_state

SCHEMA = 1
KINDS = ("bench", "time")


def machine() -> dict[str, Any]:
    """The machine a number was measured on (read from /proc; nothing imported)."""
    cpu, flags = platform.processor() or platform.machine(), ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and cpu in ("", platform.machine(), platform.processor()):
                cpu = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = value
    except OSError:
        pass
    mem_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gb = round(int(line.split()[1]) * 1024 / 2 ** 30, 1)
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": cpu, "cores": usable, "cpus_online": os.cpu_count(), "memory_gib": mem_gb,
            "avx512": "avx512f" in flags.split(), "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version()}


def revision(root: Path) -> dict[str, Any]:
    """``commit`` (short), ``commit_full`` and ``dirty`` (tracked files other than the results differ
    from the commit); None where ``root`` is not a git checkout."""
    state = git_state(root, exclude=(layout.BENCH_RESULTS_DIR,))
    full = state["commit"]
    return {"commit": full[:7] if full else None, "commit_full": full, "dirty": state["dirty"]}


def header(root: Path, kind: str) -> dict[str, Any]:
    """What every record starts with."""
    return {"schema": SCHEMA, "kind": kind, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **revision(root), "machine": machine(), "load_avg_before": _load()}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def finish(record: dict[str, Any]) -> dict[str, Any]:
    record["load_avg_after"] = _load()
    return record


def slug(text: str) -> str:
    """A file-name part of a command's name ("make test" -> "make-test")."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "command"


def new_path(out_dir: Path, record: dict[str, Any]) -> Path:
    """benchmarks/<UTC date and minute>-<commit>[-<name>].json, never an existing file's name."""
    stamp = record["started"][:16].replace(":", "")  # 2026-11-29T0102
    stem = f"{stamp}Z-{record.get('commit') or 'nogit'}" + (f"-{slug(record['name'])}" if record.get("name") else "")
    path, n = out_dir / f"{stem}.json", 2
    while path.exists():
        path, n = out_dir / f"{stem}-{n}.json", n + 1
    return path


def write(path: Path, record: dict[str, Any]) -> Path:
    """Write ``record`` to ``path`` (atomically: a run killed half-way leaves the previous version)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def read(path: Path) -> dict[str, Any]:
    """One results file, checked for the fields every record has; LisError naming the file otherwise."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise LisError(f"{path} is not a readable results file ({type(e).__name__})",
                       "remove it, or write it again with lis bench") from None
    ok = isinstance(record, dict) and record.get("schema") == SCHEMA and record.get("kind") in KINDS \
        and isinstance(record.get("started"), str) and isinstance(record.get("machine"), dict) \
        and (record["kind"] != "bench" or isinstance(record.get("benchmarks"), dict)) \
        and (record["kind"] != "time" or (isinstance(record.get("name"), str)
                                          and isinstance(record.get("wall_s"), (int, float))))
    if not ok:
        raise LisError(f"{path} is not a lis results file (schema {SCHEMA}: kind, started, machine, "
                       "benchmarks or name and wall_s)", "remove it, or write it again with lis bench")
    record["file"] = path.name
    return record


def read_all(folder: Path) -> list[dict[str, Any]]:
    """Every results file in ``folder``, oldest first (by their start time, then their name)."""
    if not folder.is_dir():
        raise LisError(f"no results folder at {folder}", "run lis bench all (or lis bench time) first")
    records = [read(p) for p in sorted(folder.glob("*.json"))]
    if not records:
        raise LisError(f"no results files (*.json) in {folder}", "run lis bench all (or lis bench time) first")
    return sorted(records, key=lambda r: (r["started"], r["file"]))

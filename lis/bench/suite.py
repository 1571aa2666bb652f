"""`lis bench all`: run a list of benchmarks one after the other into ONE results file.

    record, path = run_suite(benchmarks, root, out_dir, names, progress=print)

Each :class:`Benchmark` returns ``{"numbers": {...}, "checks": [...]}`` (checks made by
:func:`check`). A benchmark that raises is recorded with its error and the run goes on; the file is
rewritten after every benchmark, so an interrupted run keeps what finished.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from lis.bench import results
from lis.errors import LisError
from lis.util import cancel


@dataclass(frozen=True)
class Benchmark:
    name: str
    about: str                                   # one line: what is measured, against what
    run: Callable[["Context"], dict[str, Any]]   # -> {"numbers": ..., "checks": [...]}
    minutes: float                               # about how long on 2 cores (progress only)
    default: bool = True                         # part of `lis bench all` without --only


@dataclass
class Context:
    """What a benchmark is given: the repository, the params profile, a scratch folder shared by the
    run's benchmarks (models built once: :meth:`shared`), and a progress callback."""
    root: Path
    profile: str | None
    scratch: Path
    progress: Callable[[str], None] = lambda s: None
    _params: Any = field(default=None, repr=False)

    def params(self):
        if self._params is None:
            from lis.params import load  # lazy: only the benchmarks that read params pay for it

            self._params = load(self.root, profile=self.profile)
        return self._params

    def shared(self, name: str, build: Callable[[Path], Any]) -> Path:
        """``scratch/name``, built by ``build(path)`` the first time a benchmark asks for it."""
        path = self.scratch / name
        done = self.scratch / f".{name}.done"
        if not done.exists():
            shutil.rmtree(path, ignore_errors=True)
            build(path)
            done.touch()
        return path


def check(checks: list[dict[str, Any]], name: str, ok: bool, value: Any = None) -> bool:
    """Append one check (``name`` says what must hold) and return whether it held."""
    checks.append({"check": name, "ok": bool(ok), "value": value})
    return bool(ok)


def select(benchmarks: list[Benchmark], only: str | None) -> list[Benchmark]:
    """The benchmarks ``--only NAME,...`` names (in the suite's order), or the default ones; LisError
    naming an unknown name."""
    if only is None:
        return [b for b in benchmarks if b.default]
    names = [n.strip() for n in only.split(",") if n.strip()]
    known = {b.name for b in benchmarks}
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise LisError(f"--only {only!r}: unknown benchmark(s) {', '.join(unknown) or '(none named)'}",
                       f"name some of: {', '.join(b.name for b in benchmarks)}")
    return [b for b in benchmarks if b.name in names]


def run_suite(benchmarks: list[Benchmark], root: Path, out_dir: Path, profile: str | None = None,
              only: str | None = None, progress: Callable[[str], None] = lambda s: None) -> tuple[dict[str, Any], Path]:
    """Run ``benchmarks`` in order, recording each into one results file under ``out_dir``; return the
    record and its path. ``only``: the --only the run was given (None: the whole default suite)."""
    record = results.header(root, "bench")
    record.update({"profile": profile, "only": only, "selected": [b.name for b in benchmarks], "benchmarks": {}})
    path = results.new_path(out_dir, record)
    t_all = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="lis-bench-all-"))
    try:
        for i, b in enumerate(benchmarks, 1):
            cancel.check()
            head = f"[{i}/{len(benchmarks)}] {b.name} (~{b.minutes:g} min)"
            progress(head)
            ctx = Context(root=root, profile=profile, scratch=scratch,
                          progress=lambda s, head=head: progress(f"{head}: {s}"))
            entry: dict[str, Any] = {"about": b.about, "load_avg_1m_before": round(os.getloadavg()[0], 2)}
            record["benchmarks"][b.name] = entry
            t0 = time.monotonic()
            try:
                got = b.run(ctx) or {}
                entry["numbers"] = got.get("numbers", {})
                entry["checks"] = got.get("checks", [])
                entry["ok"] = all(c["ok"] for c in entry["checks"])
            except LisError as e:
                entry.update(ok=False, error=e.one_line())
            except Exception as e:  # noqa: BLE001 - one failing benchmark is recorded; the others still run
                entry.update(ok=False, error=f"{type(e).__name__}: {' '.join(str(e).split())[:600]}",
                             traceback=traceback.format_exc().strip().splitlines()[-12:])
            entry["wall_s"] = round(time.monotonic() - t0, 1)
            progress(f"{head}: {'ok' if entry['ok'] else 'FAILED'} in {entry['wall_s']:.0f} s"
                     + (f" ({entry['error']})" if entry.get("error") else ""))
            record["wall_s"] = round(time.monotonic() - t_all, 1)
            results.write(path, results.finish(record))
    except BaseException:  # interrupted: the file keeps what finished, and says where it stopped
        record["interrupted"] = True
        for entry in record["benchmarks"].values():
            if "ok" not in entry:
                entry.update(ok=False, error="interrupted")
        record["wall_s"] = round(time.monotonic() - t_all, 1)
        results.write(path, results.finish(record))
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    record["wall_s"] = round(time.monotonic() - t_all, 1)
    record["ok"] = all(e["ok"] for e in record["benchmarks"].values())
    results.write(path, results.finish(record))
    return record, path

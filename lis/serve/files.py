"""What episodes produced, kept server-side: ``<files_dir>/<trajectory_id>/output/`` (the sandbox's
/testbed/output, copied out when the episode ends) and ``trajectory.json`` (the full record)."""
from __future__ import annotations

import json
import logging
import re
import shutil
import time
from pathlib import Path
from typing import Any

from lis.util.text import safe_text

log = logging.getLogger("lis.serve")
ID = re.compile(r"^[a-z0-9]{8,64}$")
MAX_LISTED = 1000


class FileStore:
    def __init__(self, root: Path, ttl_s: float = 0.0):
        self.root = Path(root)
        self.ttl_s = ttl_s
        self.root.mkdir(parents=True, exist_ok=True)

    def folder(self, tid: str) -> Path:
        if not ID.match(tid):
            raise ValueError(f"bad trajectory id {tid!r}")
        return self.root / tid

    def output(self, tid: str) -> Path:
        return self.folder(tid) / "output"  # copy_out keeps the folder's name

    def listing(self, tid: str) -> list[tuple[str, int]]:
        """(path relative to the output folder, bytes) of every produced file, sorted, at most MAX_LISTED."""
        out = self.output(tid)
        if not out.is_dir():
            return []
        files = sorted(p for p in out.rglob("*") if p.is_file() and not p.is_symlink())
        return [(p.relative_to(out).as_posix(), p.stat().st_size) for p in files[:MAX_LISTED]]

    def resolve(self, tid: str, path: str) -> Path | None:
        """The produced file ``path`` of trajectory ``tid``; None when there is no such file or the
        path leaves the output folder."""
        if not ID.match(tid):
            return None
        base = self.output(tid).resolve()
        try:
            target = (base / path).resolve()
            target.relative_to(base)
        except (ValueError, OSError):
            return None
        return target if target.is_file() else None

    def save_trajectory(self, tid: str, record: dict[str, Any]) -> None:
        d = self.folder(tid)
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / "trajectory.json.tmp"
        text = json.dumps(record, ensure_ascii=False, default=str, indent=1)
        tmp.write_text(safe_text(text)[0], encoding="utf-8")  # never unencodable (lis.util.text)
        tmp.replace(d / "trajectory.json")

    def trajectory(self, tid: str) -> Path | None:
        if not ID.match(tid):
            return None
        p = self.folder(tid) / "trajectory.json"
        return p if p.is_file() else None

    def sweep(self) -> int:
        """Remove the folders older than ``ttl_s`` (0 keeps everything); return how many went."""
        if self.ttl_s <= 0 or not self.root.is_dir():
            return 0
        now, n = time.time(), 0
        for d in self.root.iterdir():
            try:
                if d.is_dir() and ID.match(d.name) and now - d.stat().st_mtime > self.ttl_s:
                    shutil.rmtree(d, ignore_errors=True)
                    n += 1
            except OSError as e:
                log.debug("sweep %s: %s", d, e)
        return n

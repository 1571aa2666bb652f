"""Stable content hashes for params sections and source trees."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal strings."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def hash_obj(obj: Any, n: int = 16) -> str:
    """The first ``n`` hex digits of SHA-256 of :func:`canonical_json`; text that is not valid Unicode
    (a lone surrogate from a task row) hashes as its code points (``surrogatepass``), never fails."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8", "surrogatepass")).hexdigest()[:n]


def hash_tree(root: Path, n: int = 16) -> str:
    """Hash of every regular file under ``root`` (relative path, executable bit, bytes), independent of
    mtimes and of the order the file system lists entries in."""
    h = hashlib.sha256()
    root = Path(root)
    for p in sorted(q for q in root.rglob("*") if q.is_file()):
        rel = p.relative_to(root).as_posix()
        if "__pycache__" in rel.split("/"):
            continue
        h.update(rel.encode() + b"\0")
        h.update(b"x" if p.stat().st_mode & 0o111 else b"-")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:n]

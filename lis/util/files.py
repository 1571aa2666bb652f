"""Whole files and folders: a file's SHA-256, and a finished folder moved into place."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB blocks: a model's weights need not fit in memory)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def replace_dir(tmp: Path, out: Path) -> None:
    """Move the finished folder ``tmp`` to ``out`` (a crash never leaves a half-written model)."""
    tmp.chmod(0o755)
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)

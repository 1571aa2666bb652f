"""The root-only paths of a sandbox root filesystem, and what bubblewrap puts over them.

Under Docker the sandbox user cannot read a file only root may read (``/etc/shadow``) or enter a
folder only root may enter (``/root``). Under bubblewrap started by root, the sandbox's uid is host
root in a user namespace: without capabilities, but the owner of every root-owned file, so the owner's
bits let it read them. The bubblewrap backend therefore mounts a file and a folder of mode 000 over
each such path: reading one fails with "Permission denied", as under Docker.

The paths are found once per root filesystem (immutable once built) and kept beside it
(``<rootfs>.root-only.json``).
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from lis.manifest import write_json

SUFFIX = ".root-only.json"


def find_root_only(rootfs: Path) -> list[str]:
    """Paths (absolute inside the sandbox) of files others may not read and folders others may not
    enter; symbolic links and special files are left alone (a link's target is checked where it lies)."""
    found: list[str] = []
    stack = [rootfs]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            inside = "/" + os.path.relpath(e.path, rootfs)
            if stat.S_ISDIR(st.st_mode):
                if not st.st_mode & stat.S_IXOTH:
                    found.append(inside)
                else:
                    stack.append(Path(e.path))
            elif stat.S_ISREG(st.st_mode) and not st.st_mode & stat.S_IROTH:
                found.append(inside)
    return sorted(found)


def root_only_paths(rootfs: Path) -> list[str]:
    """:func:`find_root_only` of ``rootfs``, kept in a file beside it (when the folder above is writable)."""
    rootfs = Path(rootfs)
    kept = rootfs.with_name(rootfs.name + SUFFIX)
    try:
        data = json.loads(kept.read_text(encoding="utf-8"))
        if isinstance(data, list) and all(isinstance(p, str) for p in data):
            return data
    except (OSError, ValueError):
        pass
    paths = find_root_only(rootfs)
    try:
        write_json(kept, paths)
    except OSError:
        pass  # a root filesystem shared read-only: found again next time
    return paths


def deny_sources(cache: Path) -> tuple[str, str]:
    """(a file, a folder), both empty and of mode 000, to mount over root-only paths."""
    cache.mkdir(parents=True, exist_ok=True)
    file, folder = cache / "denied-file", cache / "denied-dir"
    if not file.exists():
        file.touch()
    folder.mkdir(exist_ok=True)
    for p in (file, folder):
        if stat.S_IMODE(p.stat().st_mode):
            os.chmod(p, 0)
    return str(file), str(folder)

"""``lis sandbox cleanup``: remove the sandboxes lis left behind, by label — ours and nothing else."""
from __future__ import annotations

import logging
import os
import socket
import time

from lis.sandbox.labels import MANAGED

log = logging.getLogger(__name__)


def _owner_alive(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True  # another machine's: we cannot tell, so it is not an orphan
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def find(client, run: str | None = None, everything: bool = False) -> list[dict]:
    """Containers labelled lis.managed=true that should go: those of ``run``; all of them
    (``everything``); by default the orphans (owner process gone on this host, or expired).

    One list call, no per-container inspection: another process may remove a container between
    the two (a pool's start-up sweep, a second cleanup), which must not fail this one."""
    filters = {"label": [f"{MANAGED}=true"] + ([f"lis.run={run}"] if run else [])}
    out = []
    now = time.time()
    for c in client.api.containers(all=True, filters=filters):
        labels = c.get("Labels") or {}
        if run or everything:
            out.append(c)
        elif int(labels.get("lis.expires", "0") or 0) < now or not _owner_alive(labels.get("lis.owner", "")):
            out.append(c)
    return out


def _name(c: dict) -> str:
    names = c.get("Names") or []
    return names[0].lstrip("/") if names else c["Id"][:12]


def cleanup(run: str | None = None, everything: bool = False, engines: list[str | None] | None = None,
            dry_run: bool = False) -> list[str]:
    """Remove what ``find`` selects on each engine; return the names removed (a container that
    another process removed first is not an error)."""
    from lis.sandbox.engine import connect

    removed = []
    for url in engines or [None]:
        client = connect(url)
        for c in find(client, run, everything):
            removed.append(_name(c))
            if not dry_run:
                try:
                    client.api.remove_container(c["Id"], force=True)
                except Exception as e:  # already gone (auto_remove, another sweep) is fine
                    log.debug("remove %s: %s", _name(c), e)
    return removed

"""``lis sandbox cleanup``: remove the sandboxes lis left behind, by label — ours and nothing else."""
from __future__ import annotations

import logging
import math
import os
import socket
import time

from lis.sandbox.engine import connect
from lis.sandbox.labels import MANAGED

log = logging.getLogger(__name__)


def _owner_alive(owner: object) -> bool:
    """Whether the ``lis.owner`` label (``host:pid``) names a live process. Another machine's, or a value
    we cannot read, is taken as alive: we cannot tell, so it is not an orphan."""
    if not isinstance(owner, str):
        return True
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not (pid.isascii() and pid.isdigit()) or not 0 < int(pid) < 1 << 31:
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):  # PermissionError: alive, someone else's
        return True
    return True


def expires_at(labels: dict) -> float | None:
    """The time in the ``lis.expires`` label. Missing or empty: 0 (expired); not a finite number
    ("never", garbage, "nan"): None, no known expiry (the owner decides)."""
    value = labels.get("lis.expires")
    if value is None or (isinstance(value, str) and not value.strip()):
        return 0.0
    try:
        t = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return t if math.isfinite(t) else None


def orphaned(labels: dict, now: float | None = None) -> bool:
    """A sandbox whose lifetime is over or whose owner process is gone from this host. Never
    raises, whatever the label values."""
    t = expires_at(labels)
    expired = t is not None and t < (time.time() if now is None else now)
    return expired or not _owner_alive(labels.get("lis.owner", ""))


def find(client, run: str | None = None, everything: bool = False) -> list[dict]:
    """Containers labelled lis.managed=true that should go: those of ``run``; all of them
    (``everything``); by default the orphans (owner process gone on this host, or expired). One list
    call, no per-container inspection: another sweep may remove a container in between."""
    filters = {"label": [f"{MANAGED}=true"] + ([f"lis.run={run}"] if run else [])}
    found = client.api.containers(all=True, filters=filters)
    if run or everything:
        return list(found)
    now = time.time()
    return [c for c in found if orphaned(c["Labels"] if isinstance(c.get("Labels"), dict) else {}, now)]


def _name(c: dict) -> str:
    names = c.get("Names") or []
    return str(names[0]).lstrip("/") if names else str(c.get("Id", "?"))[:12]


def cleanup(run: str | None = None, everything: bool = False, engines: list[str | None] | None = None,
            dry_run: bool = False) -> list[str]:
    """Remove what ``find`` selects on each engine; return the names removed (a container that
    another process removed first is not an error)."""
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

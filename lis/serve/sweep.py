"""No server run leaves a container behind: at start-up, remove the sandboxes of earlier server runs
whose server is gone (label lis.run=serve-*, owner process dead on this host or lifetime over); at
shutdown, every sandbox labelled with this run's id. Docker only (a bubblewrap sandbox is a child
process and dies with the server)."""
from __future__ import annotations

import logging

from lis.sandbox.cleanup import orphaned as gone
from lis.sandbox.engine import connect
from lis.sandbox.labels import MANAGED
from lis.serve.settings import RUN_PREFIX

log = logging.getLogger("lis.serve")


def _ours(client, run: str | None = None) -> list[dict]:
    labels = [f"{MANAGED}=true"] + ([f"lis.run={run}"] if run else [])
    return client.api.containers(all=True, filters={"label": labels})


def _remove(client, found: list[dict]) -> list[str]:
    names = []
    for c in found:
        names.append((c.get("Names") or [c["Id"][:12]])[0].lstrip("/"))
        try:
            client.api.remove_container(c["Id"], force=True)
        except Exception as e:  # noqa: BLE001 - already gone (auto_remove) is fine
            log.debug("remove %s: %s", names[-1], e)
    return names


def orphaned(labels: dict[str, str], own_run: str, now: float | None = None) -> bool:
    """A sandbox of an earlier server run whose server is gone (or whose lifetime is over)."""
    run = labels.get("lis.run", "")
    if not run.startswith(RUN_PREFIX) or run == own_run:
        return False
    return gone(labels, now)  # any label value: never raises


def sweep_earlier(engines: list[str | None], own_run: str) -> list[str]:
    """Remove the orphaned sandboxes of earlier server runs; return their names."""
    removed = []
    for url in engines or [None]:
        client = connect(url)
        removed += _remove(client, [c for c in _ours(client) if orphaned(c.get("Labels") or {}, own_run)])
    if removed:
        log.warning("start-up sweep: removed %d sandbox(es) left by earlier server runs: %s", len(removed),
                    ", ".join(removed[:10]))
    else:
        log.info("start-up sweep: no sandbox left by earlier server runs")
    return removed


def sweep_own(engines: list[str | None], own_run: str) -> list[str]:
    """Remove every sandbox labelled with this server run's id (shutdown)."""
    removed = []
    for url in engines or [None]:
        try:
            client = connect(url)
            removed += _remove(client, _ours(client, own_run))
        except Exception as e:  # noqa: BLE001 - shutdown goes on; the next start-up sweeps
            log.warning("shutdown sweep on %s failed: %s", url or "the local engine", e)
    if removed:
        log.info("shutdown sweep: removed %d sandbox(es) of this run", len(removed))
    return removed

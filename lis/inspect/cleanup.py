"""``inspect sandbox cleanup lis [id]``: remove the Docker sandboxes the provider started, by label
(``lis.run`` = ``inspect-…``), never anyone else's. ``id``: one sandbox (container name or id) or
one run (``inspect-…``). Bubblewrap sandboxes need no sweep: they die with the process."""
from __future__ import annotations

import logging

from lis.inspect.pools import RUN_PREFIX
from lis.sandbox.cleanup import _name, find
from lis.sandbox.engine import connect

log = logging.getLogger(__name__)


def sweep(id: str | None = None) -> list[str]:
    """Remove the provider's sandboxes (all of them, or those ``id`` names); return their names."""
    try:
        client = connect()
    except Exception as e:  # noqa: BLE001 - no engine here: nothing of ours to remove
        log.info("no Docker engine (%s): no lis sandbox to remove", e)
        return []
    removed = []
    for c in find(client, everything=True):
        run = str((c.get("Labels") or {}).get("lis.run", ""))
        if not run.startswith(RUN_PREFIX):
            continue
        name = _name(c)
        if id is not None and id not in (name, run) and not str(c.get("Id", "")).startswith(id):
            continue
        try:
            client.api.remove_container(c["Id"], force=True)
            removed.append(name)
        except Exception as e:  # noqa: BLE001 - already gone (auto_remove, another sweep)
            log.debug("remove %s: %s", name, e)
    return removed

"""Labels on every sandbox we start: how cleanup finds ours, and only ours."""
from __future__ import annotations

import os
import socket
import time

MANAGED = "lis.managed"


def sandbox_labels(config, backend: str) -> dict[str, str]:
    return {**helper_labels(config.run_id, config.lifetime_s), "lis.backend": backend}


def helper_labels(run: str, lifetime_s: float) -> dict[str, str]:
    """Labels of a short-lived helper container of ours (the image probe): swept like a sandbox once its
    owner is gone or its time is up, never while this process still uses it."""
    return {MANAGED: "true", "lis.run": run, "lis.owner": f"{socket.gethostname()}:{os.getpid()}",
            "lis.expires": str(int(time.time() + lifetime_s))}

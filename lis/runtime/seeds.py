"""Seeds of episodes: the same (base seed, task, repeat) gives the same seed in every stage."""
from __future__ import annotations

import hashlib


def episode_seed(base: int, task_id: str, repeat: int) -> int:
    """The sampling seed of repeat ``repeat`` of task ``task_id`` under the stage's seed ``base``: the
    first 32 bits of SHA-256 of ``"base:task_id:repeat"`` (stable across processes and versions)."""
    return int(hashlib.sha256(f"{base}:{task_id}:{repeat}".encode()).hexdigest()[:8], 16)

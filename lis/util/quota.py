"""The sandbox's disk quotas against its memory: the rule params validation applies (lis.params), kept
here so that reading params imports neither the sandbox package nor (the loader passes the defaults from
its schema) the ``sandbox.limits`` model."""
from __future__ import annotations

QUOTA_KEYS = ("testbed_mb", "tmp_mb", "home_mb", "var_tmp_mb", "reserve_mb")


def quota_problem(limits: dict, defaults: dict | None = None) -> str | None:
    """Why these limits (a ``sandbox.limits`` mapping) let the tmpfs quotas plus the reserve for
    processes exceed the memory limit, or None when they fit (missing keys take ``defaults``, else
    the model's)."""
    if defaults is None:
        from lis.config.sandbox import Limits  # lazy: the models are slow to import

        defaults = Limits().model_dump()
    d = {**defaults, **limits}
    total = sum(int(d[k]) for k in QUOTA_KEYS)
    if total <= int(d["memory_mb"]):
        return None
    parts = " + ".join(f"{k} {d[k]}" for k in QUOTA_KEYS)
    return (f"the tmpfs quotas plus the reserve for processes ({parts} = {total} MB) exceed memory_mb "
            f"{d['memory_mb']}: files in tmpfs are memory, so a full disk would be an out-of-memory kill")

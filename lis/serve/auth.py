"""API keys: ``Authorization: Bearer <key>``, the accepted keys read from the environment variable
that ``serve.api_key_env`` names (several separated by commas). No key configured = open."""
from __future__ import annotations

import hmac
import logging
import os

from lis.serve.errors import ApiError

log = logging.getLogger("lis.serve")


def load_keys(env_name: str) -> list[str]:
    return [k.strip() for k in os.environ.get(env_name, "").split(",") if k.strip()]


def warn_if_open(keys: list[str], env_name: str, host: str) -> None:
    if keys:
        log.info("API keys: %d accepted (from $%s)", len(keys), env_name)
        return
    bar = "!" * 78
    log.warning("%s", bar)
    log.warning("NO API KEY CONFIGURED ($%s is unset or empty): anyone who reaches %s may run episodes", env_name, host)
    log.warning("set %s=<key> to require `Authorization: Bearer <key>`", env_name)
    log.warning("%s", bar)


def check(header: str | None, keys: list[str]) -> None:
    """Raise a 401 ApiError unless ``header`` carries one of ``keys`` (any header passes when open)."""
    if not keys:
        return
    if not header or not header.lower().startswith("bearer "):
        raise ApiError(401, "missing API key: send `Authorization: Bearer <key>` (the OpenAI client's api_key)",
                       code="invalid_api_key")
    given = header[7:].strip().encode()
    if not any(hmac.compare_digest(given, k.encode()) for k in keys):
        raise ApiError(401, "incorrect API key provided", code="invalid_api_key")

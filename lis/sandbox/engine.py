"""Docker engine connections with clear errors (one client per engine URL, pool sized for threads)."""
from __future__ import annotations

import os
import threading

from lis.errors import EngineError

_clients: dict[tuple[str | None, int], "docker.DockerClient"] = {}  # noqa: F821
_lock = threading.Lock()

HINT = "start one with `bash scripts/setup.sh docker` (root on Debian/Ubuntu) or install Docker; check with `lis doctor`"


def connect(url: str | None = None, timeout: int = 120, pool_size: int = 64):
    """A shared ``docker.DockerClient`` for ``url`` (None = the environment's default engine), its
    connection pool sized for ``pool_size`` threads (docker-py's default breaks with ``queue.Full`` under
    more). Raises EngineError if the engine does not answer."""
    import docker

    key = (url, pool_size)
    with _lock:
        client = _clients.get(key)
        if client is None:
            try:
                if url:
                    transport = _transport(url)
                    if "tls" in transport:
                        # requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE (behind a proxy) replace the
                        # engine's CA: verify against DOCKER_CERT_PATH's ca.pem only. The constructor asks
                        # the API version, so start at the oldest and take the engine's once trust_env is off.
                        from docker.constants import MINIMUM_DOCKER_API_VERSION

                        client = docker.DockerClient(base_url=url, timeout=timeout, max_pool_size=pool_size,
                                                     version=MINIMUM_DOCKER_API_VERSION, **transport)
                        client.api.trust_env = False
                        client.api._version = client.api.version(api_version=False)["ApiVersion"]
                    else:
                        client = docker.DockerClient(base_url=url, timeout=timeout, max_pool_size=pool_size,
                                                     **transport)
                else:
                    client = docker.from_env(timeout=timeout, max_pool_size=pool_size,
                                             use_ssh_client=os.environ.get("DOCKER_HOST", "").startswith("ssh://"))
                client.ping()
            except Exception as e:  # DockerException, ConnectionError, PermissionError ...
                where = url or "the default socket"
                reason = " ".join(str(e).split())[:160]
                if "Permission denied" in reason:
                    raise EngineError(f"the Docker engine at {where} refused this user ({reason})",
                                      "add the user to the 'docker' group and log in again") from None
                raise EngineError(f"no Docker engine answers at {where} ({reason})", HINT) from None
            _clients[key] = client
    return client


def _transport(url: str) -> dict:
    """How to reach ``url``, as the Docker client does: ``ssh://[user@]host[:port]`` through the system's
    ``ssh`` command (its keys, agent and ~/.ssh/config; no paramiko), ``tcp://`` with TLS when
    ``DOCKER_TLS_VERIFY`` / ``DOCKER_CERT_PATH`` say so (``ca.pem``, ``cert.pem``, ``key.pem``)."""
    if url.startswith("ssh://"):
        return {"use_ssh_client": True}
    if url.startswith("tcp://"):
        from docker.utils import kwargs_from_env

        tls = kwargs_from_env().get("tls")
        if tls:
            return {"tls": tls}
    return {}


def engine_version(client) -> str:
    return client.version().get("Version", "?")

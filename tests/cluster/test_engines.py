"""A cluster job reaches a Docker engine over TLS (sandbox.engines: tcp://host:2376 with the Docker
client's DOCKER_TLS_VERIFY / DOCKER_CERT_PATH): the real engine behind a real TLS endpoint that
requires a client certificate signed by its CA (as `dockerd --tlsverify` does), and a sandbox that
runs commands through it. And ssh:// engines go through the system's `ssh` command."""
from __future__ import annotations

import dataclasses
import os
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

import pytest

from lis.errors import EngineError

pytestmark = [pytest.mark.docker]


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certs(d: Path) -> None:
    """A CA, a server certificate for 127.0.0.1 and a client certificate: Docker's TLS layout."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=lis-test-ca",
            "-keyout", "ca-key.pem", "-out", "ca.pem", cwd=d)
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth"),
                      ("client", "extendedKeyUsage=clientAuth")):
        (d / f"{name}.ext").write_text(ext + "\n")
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", f"{name}-key.pem",
                "-out", f"{name}.csr", cwd=d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
                "-days", "1", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=d)
    (d / "cert.pem").write_bytes((d / "client.pem").read_bytes())  # DOCKER_CERT_PATH names: ca, cert, key
    (d / "key.pem").write_bytes((d / "client-key.pem").read_bytes())


def local_engine_address():
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if host.startswith("unix://"):
        return socket.AF_UNIX, host[len("unix://"):]
    h, _, p = host.split("://", 1)[1].rpartition(":")
    return socket.AF_INET, (h, int(p))


class TlsEndpoint:
    """TLS in front of the local engine, client certificate required, bytes passed through."""

    def __init__(self, certs: Path):
        self.ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(certs / "ca.pem"))
        self.ctx.verify_mode = ssl.CERT_REQUIRED
        self.ctx.load_cert_chain(certs / "server.pem", certs / "server-key.pem")
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.handshakes = 0
        self.refused = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(raw,), daemon=True).start()

    def _one(self, raw):
        try:
            conn = self.ctx.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            self.refused += 1
            raw.close()
            return
        self.handshakes += 1
        family, address = local_engine_address()
        up = socket.socket(family, socket.SOCK_STREAM)
        up.connect(address)

        def pump(src, dst):
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.close()
                    except OSError:
                        pass

        threading.Thread(target=pump, args=(up, conn), daemon=True).start()
        pump(conn, up)

    def close(self):
        self.sock.close()


@pytest.fixture
def tls_endpoint(tmp_path):
    make_certs(tmp_path)
    ep = TlsEndpoint(tmp_path)
    yield ep, tmp_path
    ep.close()


def test_a_tls_engine_runs_sandboxes(tls_endpoint, monkeypatch, image_tag):
    from lis.sandbox import SandboxConfig, SandboxPool
    from lis.sandbox.engine import connect

    ep, certs = tls_endpoint
    url = f"tcp://127.0.0.1:{ep.port}"

    # without the Docker client's TLS variables the engine is unreachable: one line naming it
    monkeypatch.delenv("DOCKER_TLS_VERIFY", raising=False)
    monkeypatch.delenv("DOCKER_CERT_PATH", raising=False)
    with pytest.raises(EngineError, match=f"no Docker engine answers at {url}"):
        connect(url, timeout=10, pool_size=3)
    for _ in range(50):  # the endpoint counts the plain-HTTP attempt it refused in its own thread
        if ep.refused:
            break
        time.sleep(0.1)
    assert ep.refused >= 1 and ep.handshakes == 0

    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(certs))
    client = connect(url, timeout=30, pool_size=4)
    assert client.version()["Version"] and ep.handshakes >= 1
    config = SandboxConfig(image=image_tag, command_timeout_s=10, run_id="pytest-tls")
    with SandboxPool(dataclasses.replace(config, backend="docker"), max_concurrent=1, engines=[url]) as pool:
        with pool.sandbox() as sb:
            assert sb.config.engine == url
            assert sb.exec("echo over tls; python3 -c 'print(6*7)'").stdout == "over tls\n42\n"
            assert client.containers.get(sb.container.id).status == "running"   # the engine behind TLS runs it


@pytest.mark.cluster
def test_an_ssh_engine_goes_through_the_ssh_command(capfd):
    """ssh://user@host[:port]: docker-py shells out to `ssh ... docker system dial-stdio` (the node's keys,
    agent and ~/.ssh/config); it needs paramiko importable, which the slurm extra installs."""
    from lis.sandbox.engine import connect

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"ssh://nobody@127.0.0.1:{port}"
    with pytest.raises(EngineError, match=f"no Docker engine answers at {url}") as e:
        connect(url, timeout=10, pool_size=2)
    assert "paramiko" not in str(e.value)
    assert f"ssh: connect to host 127.0.0.1 port {port}" in capfd.readouterr().err

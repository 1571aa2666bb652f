"""A Unix-socket relay in front of the real Docker engine that holds every container-create request for
``delay_s`` before passing it on (the rest goes straight through): a create call that has left the client but
not yet reached the engine, as on a busy or remote engine. Bytes already sent reach the engine even when the
client has gone, as they would over a network."""
from __future__ import annotations

import os
import socket
import threading
import time

_HOST = os.environ.get("DOCKER_HOST", "")
ENGINE_SOCK = _HOST[len("unix://"):] if _HOST.startswith("unix://") else "/var/run/docker.sock"  # the engine's socket


class SlowEngine:
    def __init__(self, path: str, delay_s: float, engine_sock: str = ENGINE_SOCK):
        self.path, self.delay_s, self.engine_sock = path, delay_s, engine_sock
        self.creates_seen = threading.Event()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(path):
            os.unlink(path)
        self._server.bind(path)
        self._server.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"unix://{self.path}"

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.engine_sock)
            threading.Thread(target=self._to_engine, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._to_client, args=(upstream, client), daemon=True).start()

    def _to_engine(self, client: socket.socket, upstream: socket.socket) -> None:
        try:
            while True:
                chunk = client.recv(1 << 16)
                if not chunk:
                    return  # the client hung up: the engine's side stays open until it answers (_to_client)
                if chunk.startswith(b"POST") and b"/containers/create" in chunk.split(b"\r\n", 1)[0]:
                    self.creates_seen.set()
                    time.sleep(self.delay_s)
                upstream.sendall(chunk)
        except OSError:
            return

    def _to_client(self, upstream: socket.socket, client: socket.socket) -> None:
        try:
            while True:
                chunk = upstream.recv(1 << 16)
                if not chunk:
                    return
                try:
                    client.sendall(chunk)
                except OSError:
                    pass  # nobody listens any more; keep reading until the engine is done
        finally:
            upstream.close()
            client.close()

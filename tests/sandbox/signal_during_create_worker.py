"""One process of the slow-create signal test: lis's signal handlers installed, one Docker sandbox started in a
daemon thread against ENGINE_URL (a relay that holds create requests); once the test says the create request
left, SIGINT to itself. ``python -m tests.sandbox.signal_during_create_worker RUN_ID IMAGE ENGINE_URL``."""
from __future__ import annotations

import os
import signal
import sys
import threading


def main() -> None:
    from lis.sandbox import SandboxConfig, make_sandbox, registry

    run_id, image, engine = sys.argv[1:4]
    registry.install_signal_handlers()
    cfg = SandboxConfig(image=image, run_id=run_id, backend="docker", engine=engine, command_timeout_s=20,
                        max_starting=0)

    def start() -> None:
        try:
            make_sandbox(cfg).start().close()
        except Exception:  # noqa: BLE001 - closed by the signal while it started
            pass

    threading.Thread(target=start, daemon=True).start()
    print("started", flush=True)
    sys.stdin.readline()  # the test: the create request has left
    os.kill(os.getpid(), signal.SIGINT)
    threading.Event().wait(30)


if __name__ == "__main__":
    main()

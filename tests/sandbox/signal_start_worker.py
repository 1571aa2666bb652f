"""One process of the signal-during-start test: lis's signal handlers installed (as every `lis` command has
them), Docker sandboxes started and closed in a loop, in the main thread and in two worker threads, until a
signal ends it. ``python -m tests.sandbox.signal_start_worker RUN_ID IMAGE``; prints "ready" before the first start."""
from __future__ import annotations

import sys
import threading


def main() -> None:
    from lis.sandbox import SandboxConfig, make_sandbox, registry
    from lis.util import cancel

    run_id, image = sys.argv[1:3]
    registry.install_signal_handlers()
    cfg = SandboxConfig(image=image, run_id=run_id, backend="docker", command_timeout_s=20, max_starting=0)

    def loop() -> None:
        while not cancel.requested():
            try:
                sb = make_sandbox(cfg).start()
            except Exception:  # noqa: BLE001 - closed by the signal while it started
                continue
            sb.close()

    for _ in range(2):
        threading.Thread(target=loop, daemon=True).start()
    print("ready", flush=True)
    loop()


if __name__ == "__main__":
    main()

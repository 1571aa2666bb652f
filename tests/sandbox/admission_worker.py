"""One process of the admission test: start N sandboxes, `at_once` at a time, each under the host-wide
limits; print how many started. ``python -m tests.sandbox.admission_worker RUN_ID IMAGE N AT_ONCE MAX_STARTING
PER_S``."""
from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor


def main() -> None:
    from lis.sandbox import SandboxConfig, make_sandbox

    run_id, image, n, at_once, max_starting, per_s = sys.argv[1:7]
    cfg = SandboxConfig(image=image, run_id=run_id, command_timeout_s=20, max_starting=int(max_starting),
                        max_starts_per_s=float(per_s))

    def one(_: int) -> float:
        sb = make_sandbox(cfg).start()
        try:
            assert sb.exec("echo ok", timeout=20).stdout == "ok\n"
            return sb.admission_wait_s
        finally:
            sb.close()

    with ThreadPoolExecutor(max_workers=int(at_once)) as ex:
        waits = list(ex.map(one, range(int(n))))
    print(f"started {len(waits)} waited {max(waits):.2f}")


if __name__ == "__main__":
    main()

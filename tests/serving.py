"""`transformers serve` of a local model folder, as a real OpenAI-compatible server for tests."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

BIN = Path(sys.executable).parent


@contextlib.contextmanager
def transformers_serve(model_dir: Path, workdir: Path, timeout: float = 120) -> Iterator[str]:
    """Serve ``model_dir`` offline on a free local port; yield the /v1 base URL; always stop it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "serve.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(workdir / "hf_home")}
    cmd = [str(BIN / "transformers"), "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port),
           "--device", "cpu", "--dtype", "float32", "--log-level", "warning"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                pytest.fail(f"transformers serve exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"transformers serve not ready after {timeout:.0f} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


TRAINING_SEED_ENV = "LIS_TEST_TRAINING_SEED"
# The suite's tiny agent: the smoke recipe (workflow/params/smoke.yaml) with these overrides: the 2 SFT threads
# it was always trained with (the smoke profile went to 1 thread, a scheduling choice beside an evaluation, which
# changes the float sums and so the weights). Tests of mechanics must not depend on the weights
# (scripts/trained-behaviour-seeds.sh).
SUITE_RECIPE = {"sft": {"threads": 2}}


def suite_params():
    """The params of the suite's tiny agent: the smoke profile with :data:`SUITE_RECIPE`.

    ``$LIS_TEST_TRAINING_SEED`` = k (default 0: the recipe's seeds) sets every training seed (base, teacher,
    SFT) to k: scripts/trained-behaviour-seeds.sh runs the tests of trained behaviour (marker
    ``trained_behaviour``) over such agents, to show they hold for other training runs."""
    from lis.params import load

    p = load(Path(__file__).resolve().parents[1], profile="smoke")
    for section, values in SUITE_RECIPE.items():
        p.data[section].update(values)
    seed = int(os.environ.get(TRAINING_SEED_ENV) or 0)
    if seed:
        for section in ("base", "teacher", "sft"):
            p.data[section]["seed"] = seed
    return p


def _suite_sandbox(p):
    from lis.runtime import sandbox_config
    from lis.sandbox.image import ensure_image

    ensure_image(p.section("image"), Path(__file__).resolve().parents[1])
    return sandbox_config(p, run_id="pytest-tiny", backend=p.section("teacher").get("sandbox_backend"))  # as the teacher stage


def tiny_teacher_dir() -> Path:
    """The base and the teacher's records (``trajectories.jsonl``: real-sandbox episodes) of the suite's tiny
    agent, built once per machine into the cache (lis.train.tiny_agent.cached_teacher)."""
    from lis.train.tiny_agent import cached_teacher

    p = suite_params()
    return cached_teacher(p, _suite_sandbox(p))


def tiny_model_dir() -> Path:
    """The suite's tiny agent (base → teacher episodes in the real sandbox → SFT; :func:`suite_params`),
    built once per machine into the cache (lis.train.tiny_agent.cached_tiny_agent: a few minutes; the SFT is
    kept while the base and the records it trains on are the same)."""
    from lis.train.tiny_agent import cached_tiny_agent

    p = suite_params()
    return cached_tiny_agent(p, _suite_sandbox(p))

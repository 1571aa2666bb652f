"""Fixtures of the model tests: the tiny model, built once per session (about 75 s on 2 cores)."""
from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.sandbox.conftest import base_config  # noqa: F401  (session fixture: the image, small limits)


@pytest.fixture
def unused_port() -> int:
    """A TCP port nothing listens on (bound once by the OS, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> Path:
    """The tiny model built with the default recipe (seed 0), measured before and after its warm-up."""
    from lis.train.tiny.build import build_tiny

    out = tmp_path_factory.mktemp("models") / "tiny"
    build_tiny(out, seed=0)
    return out


@pytest.fixture(scope="session")
def small_build(tmp_path_factory) -> tuple[Path, dict]:
    """A second, quick build (seed 3, 8 warm-up steps, no measurement) to compare others with."""
    from lis.train.tiny.build import build_tiny

    out = tmp_path_factory.mktemp("models") / "small"
    return out, build_tiny(out, seed=3, sft_steps=8, measure=False)


@pytest.fixture(scope="session")
def tiny_manifest(tiny_dir) -> dict:
    return json.loads((tiny_dir / "manifest.json").read_text())


@pytest.fixture(scope="session")
def tiny_model(tiny_dir):
    """The tiny model loaded through the local transformers backend (shared: calls are locked)."""
    from lis.models.local_hf import LocalHFModel

    return LocalHFModel.load(tiny_dir, name="tiny", device="cpu", seed=0)


@pytest.fixture
def prompt() -> list[dict]:
    """The first turn of a real sandbox episode: the math sample's system and user prompts, with the
    ``Steps Remaining`` line the agent loop adds (the smoke profile's 6 turns)."""
    from lis.prompts import render_prompts
    from lis.tasks import load_samples

    messages = render_prompts(load_samples("math")[0], "sandbox")
    messages[-1]["content"] += "\nSteps Remaining: 6"
    return messages

"""A real vLLM server (the set-up's CPU build, ``scripts/setup.sh vllm``) for tests/vllm/.

Every test here is one worker group (tests/conftest.py ``worker_group``), scheduled last: vLLM takes
about a minute to start on 2 cores, so the session shares one server of the suite's tiny agent
(:func:`vllm_server`), started the way ``serve.auto`` starts it (lis.models.serve_plan.serving).
"""
from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.serve.server import free_port

# the CPU build's settings: a 1 GiB KV cache; the weight-reload route (GRPO's sync: files) needs the dev mode
VLLM_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_SERVER_DEV_MODE": "1"}
MAX_MODEL_LEN = 4096


def served_entry(model_dir: Path, port: int, name: str, dtype: str = "float32", **serve) -> dict:
    """A models entry whose server is vLLM on ``model_dir`` (serve.auto), greedy unless sampling says otherwise."""
    return {"backend": "openai", "model": name, "base_url": f"http://127.0.0.1:{port}/v1", "api_key_env": "NO_KEY",
            "max_retries": 2, "timeout_s": 300, "sampling": {"temperature": 0.0, "max_tokens": 192},
            "serve": {"auto": True, "model": str(model_dir), "tool_call_parser": "hermes",
                      "max_model_len": MAX_MODEL_LEN, "startup_timeout_s": 600, "env": dict(VLLM_ENV),
                      "extra_args": ["--dtype", dtype, "--seed", "0", "--logprobs-mode", "processed_logprobs"], **serve}}


@pytest.fixture(scope="session")
def vllm_model_dir(tiny_dir, tmp_path_factory) -> Path:
    """A copy of the tiny agent (the server reloads weights from elsewhere; the cache stays as it is)."""
    dest = tmp_path_factory.mktemp("vllm-agent") / "agent"
    shutil.copytree(tiny_dir, dest)
    return dest


@pytest.fixture(scope="session")
def vllm_server(vllm_model_dir, tmp_path_factory):
    """The tiny agent served by vLLM in float32 for the whole session (url: the OpenAI root ``.../v1``)."""
    from lis.models.serve_plan import serving

    port = free_port()
    entry = served_entry(vllm_model_dir, port, "tiny-vllm")
    root = tmp_path_factory.mktemp("vllm-serve")
    with serving({"tiny-vllm": entry}, ["tiny-vllm"], root=root) as (server,):
        yield SimpleNamespace(url=entry["base_url"], root=entry["base_url"][:-3], model="tiny-vllm", port=port,
                              entry=entry, log=server.log_path, model_dir=vllm_model_dir)

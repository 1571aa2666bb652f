"""A models entry's `serve:` block → the command that starts its server and its health URL; bad
blocks are one-line errors (at params load and when planned)."""
from __future__ import annotations

import pytest
import yaml

from lis.errors import LisError, ParamsError
from lis.models.base import ModelError
from lis.models.serve_plan import family_parser, plan
from lis.params import load
from tests.conftest import ROOT


def entry(base_url="http://localhost:8000/v1", **serve):
    return {"backend": "openai", "model": "Qwen/Qwen3-4B-Instruct-2507", "base_url": base_url, "serve": serve}


def test_the_shipped_entries_plan_what_their_comments_say_and_start_nothing():
    models = load(ROOT, profile="full").section("models")
    plans = {n: plan(n, s) for n, s in models.items()}
    assert all(p is None or p.auto is False for p in plans.values())  # opt-in: CI and own servers unaffected
    q4 = " ".join(plans["qwen3-4b-instruct-2507"].command)
    assert q4.startswith("vllm serve Qwen/Qwen3-4B-Instruct-2507 --host localhost --port 8000")
    assert "--enable-auto-tool-choice --tool-call-parser hermes" in q4
    assert "--tool-call-parser qwen3_coder" in " ".join(plans["qwen3-coder-30b-a3b-instruct"].command)
    judge = plans["qwen3-235b-a22b-instruct-2507"]
    assert "--port 8001" in " ".join(judge.command) and "--tensor-parallel-size 8 --enable-expert-parallel" in " ".join(judge.command)
    assert judge.health_url == "http://localhost:8001/health"
    ds = plans["deepseek-v3.2"]
    assert ds.command[:3] == ["python", "-m", "sglang.launch_server"] and "deepseekv32" in ds.command
    assert ds.health_url == "http://localhost:30000/v1/models"  # a generic command: base_url/models
    assert plans["base"] is None


def test_the_vllm_command_is_built_from_the_fields():
    p = plan("m", entry(auto=True, tensor_parallel_size=2, max_model_len=32768,
                        enable_prefix_caching=False, port=8123, extra_args=["--gpu-memory-utilization", "0.8"],
                        **{"model": "/weights/q4"}))
    assert p.auto and p.command == ["vllm", "serve", "/weights/q4", "--host", "localhost", "--port", "8123", "--enable-prompt-tokens-details",
                                    "--served-model-name", "Qwen/Qwen3-4B-Instruct-2507",
                                    "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
                                    "--tensor-parallel-size", "2", "--max-model-len", "32768",
                                    "--no-enable-prefix-caching", "--gpu-memory-utilization", "0.8"]
    assert "--tool-call-parser" not in plan("m", entry(tool_call_parser=None)).command  # null: no tool parser
    assert plan("m", entry(health_url="http://h/ready")).health_url == "http://h/ready"


@pytest.mark.parametrize("model,parser", [("Qwen/Qwen3-4B-Instruct-2507", "hermes"),
                                          ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_coder"),
                                          ("deepseek-ai/DeepSeek-V3.2", "deepseek_v32"),
                                          ("deepseek-ai/DeepSeek-V3.1", "deepseek_v31"),
                                          ("deepseek-ai/DeepSeek-V3", "deepseek_v3"), ("meta/llama", None)])
def test_the_tool_call_parser_follows_the_family(model, parser):
    assert family_parser(model) == parser


@pytest.mark.parametrize("spec,msg", [
    ({"backend": "local", "path": "x", "serve": {}}, "only an openai entry is served"),
    (entry(command=["x"], tensor_parallel_size=2), "command replaces the vLLM fields"),
    (entry(base_url=None, auto=True), "needs base_url"),
    (entry(port_number=1), "models.m.serve.port_number: unknown key"),
])
def test_a_bad_serve_block_is_one_line(spec, msg):
    with pytest.raises(ModelError) as e:
        plan("m", spec)
    assert msg in str(e.value) and "\n" not in e.value.one_line()


@pytest.mark.parametrize("serve,msg", [
    ({"auto": "yes"}, "models.q.serve.auto: expected boolean"),
    ({"command": ["srv"], "max_model_len": 4096}, "models.q.serve: command replaces the vLLM fields"),
    ({"tensor_parallel_size": 0}, "models.q.serve.tensor_parallel_size"),
])
def test_params_refuse_a_bad_serve_block(repo_copy, serve, msg):
    params = yaml.safe_load((repo_copy / "params.yaml").read_text())
    params["models"]["q"] = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1", "serve": serve}
    (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    with pytest.raises(ParamsError) as e:
        load(repo_copy)
    assert msg in str(e.value), str(e.value)
    assert isinstance(e.value, LisError)


def test_the_identity_a_lingering_server_is_checked_against_follows_the_weights_folder_and_env(tmp_path):
    """serve.linger_s keeps a server up for the model's next job; it is reused only while its
    weights folder (names, sizes, modification times) and environment are what it started with."""
    import os

    from lis.models.serve_plan import identity

    (tmp_path / "w").mkdir()
    (tmp_path / "w/model.safetensors").write_bytes(b"x" * 8)
    p = plan("m", entry(auto=True, model="w", linger_s=120, env={"VLLM_CPU_KVCACHE_SPACE": "1"}))
    assert p.linger_s == 120 and p.weights == "w"
    first = identity(p, tmp_path)
    assert identity(p, tmp_path) == first
    os.utime(tmp_path / "w/model.safetensors", ns=(1, 1))  # retrained in place: same name, same size
    assert identity(p, tmp_path) != first
    again = identity(p, tmp_path)
    other_env = plan("m", entry(auto=True, model="w", linger_s=120, env={"VLLM_CPU_KVCACHE_SPACE": "2"}))
    assert identity(other_env, tmp_path) != again
    assert plan("m", entry(auto=True)).linger_s == 0  # the default: stopped after its last job
    with pytest.raises(ModelError, match="linger_s"):
        plan("m", entry(auto=True, linger_s=-1))

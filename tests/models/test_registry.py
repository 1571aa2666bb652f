"""build_model: every backend from a params entry, and clear errors for bad entries."""
from __future__ import annotations

import pytest

from lis.agent.tools.schemas import TOOLS
from lis.models import (LocalHFModel, ModelError, OpenAIChatModel, Sampling, ScriptedModel, build_model)
from lis.models.server import ChatServer


def test_openai_entry_reaches_a_real_server():
    with ChatServer(ScriptedModel(["hello"])) as srv:
        m = build_model("qwen3-4b", {"backend": "openai", "model": "Qwen/Qwen3-4B-Instruct-2507",
                                     "base_url": srv.base_url, "api_key_env": "LIS_NO_SUCH_KEY",
                                     "sampling": {"temperature": 0.7, "top_p": 0.8, "top_k": 20},
                                     "timeout_s": 30, "max_retries": 1})
        assert isinstance(m, OpenAIChatModel) and m.name == "qwen3-4b"
        assert m.chat([{"role": "user", "content": "hi"}]).message["content"] == "hello"
    req = srv.requests[0]
    assert (req["model"], req["temperature"], req["top_p"], req["top_k"]) == \
        ("Qwen/Qwen3-4B-Instruct-2507", 0.7, 0.8, 20)


def test_an_entry_without_backoff_s_waits_lis_backoff_s(monkeypatch):
    entry = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    monkeypatch.delenv("LIS_BACKOFF_S", raising=False)
    assert build_model("m", entry).backoff_s == 1.0
    monkeypatch.setenv("LIS_BACKOFF_S", "0.01")
    assert build_model("m", entry).backoff_s == 0.01 and build_model("m", {**entry, "backoff_s": 2}).backoff_s == 2.0


def test_local_entry_loads_a_trained_model(tiny_dir, tiny_manifest):
    m = build_model("sft", {"backend": "local", "path": str(tiny_dir), "device": "cpu",
                            "sampling": {"temperature": 0.7, "max_tokens": 32}})
    assert isinstance(m, LocalHFModel) and m.name == "sft" and m.sampling == Sampling(temperature=0.7, max_tokens=32)
    assert m.max_context == 16384
    res = m.chat([{"role": "user", "content": "List /testbed."}], TOOLS, Sampling(seed=0))
    assert 0 < len(res.completion_ids) <= 32


def test_fingerprint_of_a_trained_model_is_its_weights_hash(tiny_dir, tiny_manifest):
    from lis.models.registry import fingerprint

    assert fingerprint("sft", {"backend": "local", "path": str(tiny_dir)}) == {
        "weights_sha256": tiny_manifest["weights_sha256"]}


def test_scripted_entry():
    m = build_model("s", {"backend": "scripted", "replies": ["x"]})
    assert isinstance(m, ScriptedModel) and m.chat([]).message["content"] == "x"


@pytest.mark.parametrize("spec, words", [
    ({"backend": "vllm"}, ["unknown backend 'vllm'", "openai, local, scripted"]),
    ({"backend": "tiny"}, ["unknown backend 'tiny'"]),
    ({}, ["unknown backend None"]),
    ({"backend": "openai", "device": "cuda"}, ["device", "do not apply to backend openai"]),
    ({"backend": "openai", "sampling": {"temp": 1}}, ["models.m.sampling", "temp"]),
    ({"backend": "local"}, ["needs `model`"]),
])
def test_bad_entries_are_one_line_model_errors(spec, words):
    with pytest.raises(ModelError) as err:
        build_model("m", spec)
    line = err.value.one_line()
    assert "\n" not in line and err.value.hint
    for w in words:
        assert w in line


def test_missing_local_folder(tmp_path):
    with pytest.raises(ModelError) as err:
        build_model("m", {"backend": "local", "model": str(tmp_path / "missing")})
    assert "no model folder" in str(err.value) and "missing" in str(err.value)
    assert "models.m.model" in err.value.hint and "lis model tiny" not in err.value.hint  # the key it was given
    with pytest.raises(ModelError) as err:
        build_model("sft", {"backend": "local", "path": str(tmp_path / "missing")})
    assert "models.sft.path" in err.value.hint and "lis train" in err.value.hint, err.value.hint

"""OpenAIChatModel against a real HTTP server (lis.models.server.ChatServer around a ScriptedModel)."""
from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from lis.agent.tools.schemas import TOOLS
from lis.models import ChatResult, ContextLengthError, ModelError, OpenAIChatModel, Sampling, Usage
from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.models.server import ChatServer
from tests.canned_http import canned_http

USER = [{"role": "user", "content": "List the documents."}]
VLLM_CONTEXT_ERROR = {"object": "error", "type": "BadRequestError", "code": 400, "message": (
    "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens "
    "(36000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.")}


def client(srv: ChatServer, name: str = "m", **kw) -> OpenAIChatModel:
    kw.setdefault("backoff_s", 0.01)
    kw.setdefault("timeout_s", 10)
    return OpenAIChatModel(name, base_url=srv.base_url, **kw)


def test_tool_calls_usage_reasoning_and_raw():
    call = tool_call("execute_bash", {"command": "ls /testbed/documents"}, call_id="call_1")
    reply = {**assistant(None, call), "reasoning_content": "First look at the files."}
    with ChatServer(ScriptedModel([reply])) as srv:
        res = client(srv).chat(USER, tools=TOOLS)
    assert isinstance(res, ChatResult)
    assert res.message["tool_calls"] == [{"id": "call_1", "type": "function", "function": {
        "name": "execute_bash", "arguments": json.dumps({"command": "ls /testbed/documents"})}}]
    assert res.message["reasoning_content"] == "First look at the files."
    assert res.message["content"] is None
    assert res.finish_reason == "tool_calls"
    sent = len(json.dumps(USER[0])) // 4  # ScriptedModel's usage: characters / 4
    assert res.usage.prompt_tokens == sent and res.usage.completion_tokens > 0 and res.usage.cached_tokens == 0
    assert res.raw["choices"][0]["message"]["reasoning_content"] == "First look at the files."
    assert res.latency_s > 0 and res.prompt_ids is None
    assert srv.requests[0]["tools"] == TOOLS and srv.requests[0]["messages"] == USER


class PrefixCachingModel(ScriptedModel):
    """A real ChatModel that reports the previous call's prompt as cached (like vLLM prefix caching)."""

    def __init__(self, replies):
        super().__init__(replies)
        self._last = 0

    def chat(self, messages, tools=None, sampling=None):
        res = super().chat(messages, tools, sampling)
        cached, self._last = self._last, res.usage.prompt_tokens
        res.usage = Usage(res.usage.prompt_tokens, res.usage.completion_tokens, cached)
        return res


def test_cached_tokens_from_prompt_tokens_details():
    with ChatServer(PrefixCachingModel(["one", "two"])) as srv:
        m = client(srv)
        first = m.chat(USER)
        second = m.chat(USER + [first.message, {"role": "user", "content": "go on"}])
    assert first.usage.cached_tokens == 0
    assert second.usage.cached_tokens == first.usage.prompt_tokens > 0
    assert second.message == {"role": "assistant", "content": "two"}


def test_sampling_params_arrive_in_the_request_body():
    default = Sampling(temperature=0.7, top_p=0.8, top_k=20, max_tokens=512, seed=1,
                       extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    with ChatServer(ScriptedModel(["a", "b"])) as srv:
        m = client(srv, model="Qwen/Qwen3-4B-Instruct-2507", sampling=default)
        m.chat(USER)
        m.chat(USER, sampling=Sampling(temperature=1.0, repetition_penalty=1.05, seed=7,
                                       extra_body={"min_p": 0.05}))
    first, second = srv.requests
    assert first["model"] == "Qwen/Qwen3-4B-Instruct-2507"
    assert {k: first[k] for k in ("temperature", "top_p", "top_k", "max_tokens", "seed")} == \
        {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "max_tokens": 512, "seed": 1}
    assert first["chat_template_kwargs"] == {"enable_thinking": False} and "repetition_penalty" not in first
    assert "tools" not in first
    # per-call settings override the model's, the rest stays; extra_body keys merge
    assert (second["temperature"], second["seed"], second["repetition_penalty"], second["top_k"]) == (1.0, 7, 1.05, 20)
    assert second["min_p"] == 0.05 and second["chat_template_kwargs"] == {"enable_thinking": False}


@pytest.mark.parametrize("model", ["o3-mini", "o4-mini-2025-04-16"])
def test_reasoning_models_get_no_temperature(model):
    with ChatServer(ScriptedModel(["ok"])) as srv:
        client(srv, model=model, sampling=Sampling(temperature=0.7, max_tokens=100)).chat(USER)
    req = srv.requests[0]
    assert "temperature" not in req and req["max_completion_tokens"] == 100 and "max_tokens" not in req


@pytest.mark.parametrize("status", [429, 503])
def test_retries_transient_failures_then_succeeds(status, caplog):
    with ChatServer(ScriptedModel(["done"]), fail_first=2, fail_status=status) as srv:
        with caplog.at_level(logging.WARNING, logger="lis.models.openai"):
            res = client(srv, max_retries=3).chat(USER)
    assert res.message["content"] == "done"
    assert len(srv.requests) == 3
    retries = [r.getMessage() for r in caplog.records]
    assert len(retries) == 2 and all(f"HTTP {status}" in r and srv.base_url in r for r in retries)
    assert "attempt 1/4" in retries[0] and "attempt 2/4" in retries[1]


def test_gives_up_after_the_last_attempt_with_one_line():
    with ChatServer(ScriptedModel(["never"]), fail_first=100, fail_status=503) as srv:
        with pytest.raises(ModelError) as err:
            client(srv, name="qwen", max_retries=2).chat(USER)
    assert len(srv.requests) == 3
    line = err.value.one_line()
    assert "\n" not in line and srv.base_url in line and "HTTP 503" in line and "3 attempts" in line
    assert "models.qwen.base_url" in err.value.hint


def test_retry_after_header_is_honoured():
    with ChatServer(ScriptedModel(["ok"]), fail_first=1, fail_status=429, fail_headers={"Retry-After": "1"}) as srv:
        res = client(srv, max_retries=1).chat(USER)
    assert res.message["content"] == "ok" and res.latency_s >= 1.0


def test_unreachable_port_fails_fast(unused_port):
    m = OpenAIChatModel("local", base_url=f"http://127.0.0.1:{unused_port}/v1", max_retries=2, backoff_s=0.01)
    t0 = time.monotonic()
    with pytest.raises(ModelError) as err:
        m.chat(USER)
    assert time.monotonic() - t0 < 5
    assert f"127.0.0.1:{unused_port}" in str(err.value) and "connection failed" in str(err.value)
    assert "start the server" in err.value.hint


def test_timeout_is_retried_then_reported():
    with ChatServer(ScriptedModel(["late", "late"], latency_s=1.0)) as srv:
        with pytest.raises(ModelError) as err:
            client(srv, max_retries=1, timeout_s=0.3).chat(USER)
    assert len(srv.requests) == 2 and "no answer within 0.3 s" in str(err.value)


def test_context_length_error_is_not_retried():
    with ChatServer(ScriptedModel(["never"]), fail_first=5, fail_status=400, fail_body=VLLM_CONTEXT_ERROR) as srv:
        with pytest.raises(ContextLengthError) as err:
            client(srv, max_retries=4).chat(USER)
    assert len(srv.requests) == 1
    assert (err.value.limit, err.value.requested, err.value.prompt_tokens) == (32768, 40000, 36000)
    assert "maximum context length is 32768" in str(err.value) and "\n" not in err.value.one_line()


# vLLM >= 0.10 wording when the input fits and only max_tokens does not
VLLM_MAX_TOKENS_ERROR = {"object": "error", "type": "BadRequestError", "code": 400, "message": (
    "'max_tokens' or 'max_completion_tokens' is too large: 65536. This model's maximum context length is 32768 "
    "tokens and your request has 1100 input tokens (65536 > 32768 - 1100).")}


def test_too_large_max_tokens_is_cut_to_the_room_left_once(caplog):
    with ChatServer(ScriptedModel(["fits"]), fail_first=1, fail_status=400, fail_body=VLLM_MAX_TOKENS_ERROR) as srv:
        with caplog.at_level(logging.WARNING, logger="lis.models.openai"):
            res = client(srv, max_retries=0, sampling=Sampling(max_tokens=65536)).chat(USER)
    assert res.message["content"] == "fits"
    assert [r["max_tokens"] for r in srv.requests] == [65536, 32768 - 1100 - 16]
    assert "max_tokens=31652" in caplog.records[0].getMessage()
    # a second context error after the cut is final
    with ChatServer(ScriptedModel(["never"]), fail_first=2, fail_status=400, fail_body=VLLM_MAX_TOKENS_ERROR) as srv:
        with pytest.raises(ContextLengthError) as err:
            client(srv, max_retries=3, sampling=Sampling(max_tokens=65536)).chat(USER)
    assert len(srv.requests) == 2 and err.value.prompt_tokens == 1100


def test_no_cut_when_almost_no_room_is_left():
    body = {"error": {"message": "This model's maximum context length is 32768 tokens. However, you requested "
                                 "33000 tokens (32700 in the messages, 300 in the completion)."}}
    with ChatServer(ScriptedModel(["never"]), fail_first=1, fail_status=400, fail_body=body) as srv:
        with pytest.raises(ContextLengthError):
            client(srv, sampling=Sampling(max_tokens=300)).chat(USER)
    assert len(srv.requests) == 1


def test_other_client_errors_are_not_retried():
    body = {"error": {"message": "Unexpected fields in the request: {'top_k'}"}}
    with ChatServer(ScriptedModel(["never"]), fail_first=5, fail_status=422, fail_body=body) as srv:
        with pytest.raises(ModelError) as err:
            client(srv, name="hf", max_retries=4).chat(USER)
    assert len(srv.requests) == 1 and not isinstance(err.value, ContextLengthError)
    assert "HTTP 422" in str(err.value) and "top_k" in str(err.value) and "models.hf.sampling" in err.value.hint


def test_api_key_comes_from_the_named_environment_variable(monkeypatch):
    monkeypatch.setenv("LIS_TEST_KEY", "sk-test")
    assert OpenAIChatModel("a", base_url="http://x/v1", api_key_env="LIS_TEST_KEY")._client.api_key == "sk-test"
    monkeypatch.delenv("LIS_TEST_KEY")
    assert OpenAIChatModel("a", base_url="http://x/v1", api_key_env="LIS_TEST_KEY")._client.api_key == "EMPTY"


def test_concurrent_calls_from_threads():
    replies = [f"r{i}" for i in range(16)]
    with ChatServer(ScriptedModel(replies)) as srv:
        m = client(srv)
        out: list[str] = []
        lock = threading.Lock()

        def call():
            res = m.chat(USER)
            with lock:
                out.append(res.message["content"])

        threads = [threading.Thread(target=call) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(out) == sorted(replies)


def test_unknown_model_404_points_at_the_model_name():
    body = {"error": {"message": "The model `qwen` does not exist."}}
    with ChatServer(ScriptedModel(["never"]), fail_first=1, fail_status=404, fail_body=body) as srv:
        with pytest.raises(ModelError) as err:
            client(srv, name="q", model="qwen").chat(USER)
    assert len(srv.requests) == 1 and "does not exist" in str(err.value) and "models.q.model" in err.value.hint


def test_a_server_that_is_not_openai_compatible(unused_port):
    """A real HTTP server answering 200 with a web page (say, base_url missing /v1 behind a proxy)."""
    with canned_http(unused_port, b"<html>welcome</html>", "text/html") as url:
        with pytest.raises(ModelError) as err:
            OpenAIChatModel("web", base_url=url, max_retries=0).chat(USER)
    assert "\n" not in err.value.one_line() and "models.web.base_url" in err.value.hint


def test_a_server_that_answers_badly_is_not_told_to_be_started():
    """A running server that fails every attempt (500s): the hint is about what it sends, not about starting it."""
    with ChatServer(ScriptedModel(["ok"]), fail_first=10, fail_status=500) as srv:
        with pytest.raises(ModelError) as err:
            client(srv, max_retries=1).chat(USER)
    assert "gave up after 2 attempts" in str(err.value)
    assert "start the server" not in err.value.hint and "the server runs" in err.value.hint, err.value.hint

"""`lis serve` through the official OpenAI client, against a real server process whose upstream is a
replay server: the answer, usage, trajectory id and produced files; API keys; bad bodies; streaming."""
from __future__ import annotations

import json

import httpx
import openai
import pytest

from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.models.server import ChatServer
from tests.serve.server import containers, serving, solve

pytestmark = [pytest.mark.docker]
KEY = "s3cret-key"


def two_turns(answer: str = "42") -> list[dict]:
    """Turn 1 reads an input file and writes the outputs; turn 2 submits (so the prompt grows by an observation)."""
    cmd = ("cat /testbed/input/numbers.txt && mkdir -p /testbed/output && "
           f"printf %s {answer} > /testbed/output/answer.txt && printf '# report\\nsum is 42\\n' > /testbed/output/report.md")
    return [assistant("I will compute it.", tool_call("execute_bash", {"command": cmd})),
            assistant(None, tool_call("submit", {}))]


def test_answer_usage_trajectory_and_files(tmp_path, docker_client, image_tag):
    up_model = ScriptedModel(two_turns(), name="replay")
    with ChatServer(up_model) as up, serving(up.base_url, tmp_path, env={"LIS_SERVE_API_KEY": KEY}) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key=KEY, max_retries=0)
        assert [m.id for m in client.models.list()] == ["lis-agent"]
        r = client.chat.completions.create(
            model="lis-agent", temperature=0.3, max_tokens=5000,
            messages=[{"role": "system", "content": "Answer with a number only."},
                      {"role": "user", "content": "Remember the file numbers.txt."},
                      {"role": "assistant", "content": "Noted."},
                      {"role": "user", "content": "What is the sum of the numbers in numbers.txt?"}],
            extra_body={"lis": {"files": {"numbers.txt": "40\n2\n"}, "max_turns": 3}})
        assert r.choices[0].message.role == "assistant"
        assert r.choices[0].message.content == "42"
        assert r.choices[0].finish_reason == "stop"
        lis = r.model_extra["lis"]
        tid = lis["trajectory_id"]
        assert r.id == f"chatcmpl-{tid}" and lis["termination"] == "submitted" and lis["turns"] == 2
        assert lis["limits"] == {"max_turns": 3, "timeout_s": 120.0, "max_completion_tokens": 5000}
        # usage: OpenAI's counts every call; ours splits the environment's share out
        traj = httpx.get(lis["trajectory_url"], headers={"Authorization": f"Bearer {KEY}"}).json()
        steps = traj["steps"]
        p = [s["prompt_tokens"] for s in steps]
        c = [s["completion_tokens"] for s in steps]
        assert r.usage.prompt_tokens == sum(p) and r.usage.completion_tokens == sum(c) > 0
        assert r.usage.total_tokens == sum(p) + sum(c)
        assert lis["usage"]["prompt_tokens"] == p[0]
        assert lis["usage"]["environment_tokens"] == p[1] - p[0] - c[0] > 0  # the observation of `cat`
        assert lis["usage"]["calls"] == 2
        assert "40\n2" in steps[0]["calls"][0]["observation"]  # lis.files reached /testbed/input
        # produced files, downloaded through the files endpoint
        files = {f["path"]: f for f in lis["files"]}
        assert set(files) == {"answer.txt", "report.md"}
        got = httpx.get(files["report.md"]["url"], headers={"Authorization": f"Bearer {KEY}"})
        assert got.status_code == 200 and got.text == "# report\nsum is 42\n"
        assert files["report.md"]["bytes"] == len(got.content)
        # the conversation became the task: instructions, context, then the request
        sent = up.requests[0]
        task = sent["messages"][1]["content"]
        assert "<instructions>\nAnswer with a number only.\n</instructions>" in task
        assert "[user]\nRemember the file numbers.txt." in task and "[assistant]\nNoted." in task
        assert task.index("</conversation>") < task.index("What is the sum of the numbers in numbers.txt?")
        assert sent["temperature"] == 0.3 and sent["max_tokens"] == 5000
        assert sent["messages"][0]["role"] == "system" and "Answer with a number" not in sent["messages"][0]["content"]
        # the episode's sandbox is gone as soon as the answer came
        assert containers(docker_client, srv.run_label) == []
        # outside the output folder: nothing
        for path in ("%2e%2e/trajectory.json", "%2e%2e/%2e%2e/%2e%2e/etc/passwd", "%2Fetc%2Fpasswd"):
            bad = httpx.get(f"{srv.base_url}/files/{tid}/{path}", headers={"Authorization": f"Bearer {KEY}"})
            assert bad.status_code == 404, (path, bad.status_code, bad.text)
        assert httpx.get(f"{srv.base_url}/files/{tid}/nope.txt",
                         headers={"Authorization": f"Bearer {KEY}"}).json()["error"]["code"] == "file_not_found"


def test_wrong_or_missing_key_is_401(tmp_path, image_tag):
    with ChatServer(ScriptedModel([solve()], name="replay")) as up, \
            serving(up.base_url, tmp_path, env={"LIS_SERVE_API_KEY": f"other,{KEY}"}) as srv:
        bad = openai.OpenAI(base_url=srv.base_url, api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as e:
            bad.chat.completions.create(model="lis-agent", messages=[{"role": "user", "content": "hi"}])
        assert e.value.status_code == 401 and e.value.body["code"] == "invalid_api_key"
        with pytest.raises(openai.AuthenticationError):
            bad.models.list()
        raw = httpx.post(f"{srv.base_url}/chat/completions", json={"model": "lis-agent", "messages": []})
        assert raw.status_code == 401
        assert raw.json()["error"]["message"].startswith("missing API key")
        assert httpx.get(f"{srv.base_url}/files/{'0' * 32}/answer.txt").status_code == 401
        assert up.requests == []  # nothing reached the upstream
        good = openai.OpenAI(base_url=srv.base_url, api_key=KEY, max_retries=0)  # the second of two keys
        assert good.chat.completions.create(model="lis-agent",
                                            messages=[{"role": "user", "content": "hi"}]).choices[0].message.content == "42"


BAD = [
    ("not json", b"{not json", 400, "not valid JSON"),
    ("nested 5,000 deep", b'{"model": "lis-agent", "messages": ' + b"[" * 5000 + b"]" * 5000 + b"}", 400,
     "nested too deep"),  # was a 500 and a traceback in the log (issue 26)
    ("not an object", [1, 2], 400, "must be a JSON object"),
    ("no model", {"messages": [{"role": "user", "content": "hi"}]}, 400, "model is required"),
    ("unknown model", {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}, 404, "does not exist"),
    ("no messages", {"model": "lis-agent"}, 400, "messages must be a non-empty list"),
    ("empty messages", {"model": "lis-agent", "messages": []}, 400, "messages must be a non-empty list"),
    ("bad role", {"model": "lis-agent", "messages": [{"role": "robot", "content": "hi"}]}, 400, "role must be one of"),
    ("last not user", {"model": "lis-agent", "messages": [{"role": "user", "content": "hi"},
                                                         {"role": "assistant", "content": "yo"}]}, 400,
     "the last message must come from the user"),
    ("empty task", {"model": "lis-agent", "messages": [{"role": "user", "content": "   "}]}, 400, "is empty"),
    ("image part", {"model": "lis-agent", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}]}, 400, "only text parts"),
    ("tools", {"model": "lis-agent", "messages": [{"role": "user", "content": "hi"}],
               "tools": [{"type": "function", "function": {"name": "f"}}]}, 400, "its own sandbox tools"),
    ("n=2", {"model": "lis-agent", "messages": [{"role": "user", "content": "hi"}], "n": 2}, 400, "only one choice"),
    ("temperature", {"model": "lis-agent", "messages": [{"role": "user", "content": "hi"}], "temperature": 7},
     400, "temperature must be a number in [0, 2]"),
    ("max_tokens", {"model": "lis-agent", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 0},
     400, "max_tokens must be an integer"),
    ("unknown field", {"model": "lis-agent", "messages": [{"role": "user", "content": "hi"}], "colour": "red"},
     400, "unrecognized request argument(s): colour"),
    ("bad lis key", {"model": "lis-agent", "messages": [{"role": "user", "content": "hi"}], "lis": {"turns": 3}},
     400, "unknown: turns"),
    ("file outside input", {"model": "lis-agent", "messages": [{"role": "user", "content": "hi"}],
                            "lis": {"files": {"../../etc/passwd": "x"}}}, 400, "not a relative file name"),
    ("too large", {"model": "lis-agent", "messages": [{"role": "user", "content": "x" * 1_100_000}]}, 413,
     "serve.max_body_bytes"),
]


def test_bad_bodies_are_4xx_in_openai_shape(tmp_path, image_tag):
    with ChatServer(ScriptedModel([solve()], name="replay")) as up, \
            serving(up.base_url, tmp_path, env={"LIS_SERVE_API_KEY": ""}) as srv:
        for name, body, status, text in BAD:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            r = httpx.post(f"{srv.base_url}/chat/completions", content=data,
                           headers={"Content-Type": "application/json"})
            assert r.status_code == status, (name, r.status_code, r.text)
            err = r.json()["error"]
            assert set(err) == {"message", "type", "param", "code"}, name
            assert text in err["message"], (name, err["message"])
        assert httpx.get(f"{srv.base_url}/nothing").json()["error"]["code"] == "not_found"
        # the official client raises its typed errors for them
        client = openai.OpenAI(base_url=srv.base_url, api_key="any", max_retries=0)
        with pytest.raises(openai.BadRequestError, match="the last message must come from the user"):
            client.chat.completions.create(model="lis-agent", messages=[{"role": "system", "content": "be brief"}])
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
        assert up.requests == []  # no episode ran for any of them
        assert srv.health()["counts"].get("episodes", 0) == 0
        # a good request still works after all that (no key configured: open)
        assert client.chat.completions.create(model="lis-agent",
                                              messages=[{"role": "user", "content": "hi"}]).choices[0].message.content == "42"
    assert "NO API KEY CONFIGURED" in srv.log_text()


def test_streaming_sends_the_answer_and_usage(tmp_path, docker_client, image_tag):
    with ChatServer(ScriptedModel(two_turns("forty-two"), name="replay")) as up, serving(up.base_url, tmp_path) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        chunks = list(client.chat.completions.create(
            model="lis-agent", stream=True, stream_options={"include_usage": True},
            messages=[{"role": "user", "content": "sum the numbers"}],
            extra_body={"lis": {"files": {"numbers.txt": "40\n2\n"}}}))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "forty-two"
        assert chunks[0].choices[0].delta.role == "assistant"
        finish = [c for c in chunks if c.choices and c.choices[0].finish_reason]
        assert len(finish) == 1 and finish[0].choices[0].finish_reason == "stop"
        lis = finish[0].model_extra["lis"]
        assert lis["termination"] == "submitted" and {f["path"] for f in lis["files"]} == {"answer.txt", "report.md"}
        assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0
        assert chunks[-1].usage.total_tokens == finish[0].usage.total_tokens
        assert len({c.id for c in chunks}) == 1 and chunks[0].id == f"chatcmpl-{lis['trajectory_id']}"
        assert containers(docker_client, srv.run_label) == []

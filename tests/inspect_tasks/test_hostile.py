"""The Inspect path held like `lis run` (tests/models/test_hostile_upstream.py) against a misbehaving model
server (tests/hostile_server.py): the episode's deadline bounds every model call, Inspect's retries
included; an outage or a reply without choices is an error of the sample, never a score of 0, with the lis
record kept; bad task arguments are one line; the offline mock works as the docs write it."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, run
from tests.hostile_server import HostileServer

pytestmark = [pytest.mark.docker, pytest.mark.slow]

LIMIT_S = 3  # the episode's time limit where the server stalls (the Done-when's 20 s measured by hand: 20 -> ≤ 40)


def _eval(project: Path, base_url: str, logs: Path, *args: str, limit: int = 1):
    env = {"HOSTILE_API_KEY": "x", "HOSTILE_BASE_URL": base_url, "INSPECT_LOG_LEVEL": "warning", "LIS_BACKOFF_S": "0.01"}
    t0 = time.monotonic()
    r = run(["inspect", "eval", "lis/math", "--model", "openai-api/hostile/hostile", "-T", "profile=ci",
             "-T", f"params={project / 'params.yaml'}", "-T", f"tasks_file={project / 'data/tasks/math.jsonl'}",
             "--limit", str(limit), "--log-dir", str(logs), "--log-format", "json", "--display", "plain",
             "--max-retries", "2", *args], env=env, timeout=180, check=False)
    wall = time.monotonic() - t0
    (path,) = sorted(logs.glob("*.json"))
    return r, wall, json.loads(path.read_text())


@pytest.mark.parametrize("behaviour, ending", [("hang", "model_timeout"), ("trickle", "model_timeout"),
                                               ("500", "model_timeout"), ("empty_choices", "model_error")])
def test_an_outage_is_the_samples_error_with_its_record(behaviour, ending, math_project, tmp_path):
    with HostileServer([behaviour], gap_s=0.5) as srv:
        r, wall, log = _eval(math_project, srv.base_url, tmp_path / "logs", "-T", f"episode_timeout_s={LIMIT_S}")
    (sample,) = log["samples"]
    assert sample["error"] and ending in sample["error"]["message"], (sample.get("error"), r.stdout[-2000:])
    assert "IndexError" not in json.dumps(sample["error"])
    assert not sample.get("scores"), sample.get("scores")  # not scored: no 0 enters the accuracy
    rec = sample["store"]["lis:trajectory"]  # the lis record kept
    assert rec["termination"] == ending and rec["error"], rec
    # the deadline cut the call (Inspect's own retries and back-off included): the episode's time plus start-up
    assert wall < LIMIT_S + 40, wall
    if ending == "model_timeout":
        assert rec["wall_s"] < LIMIT_S + 2, rec["wall_s"]


@pytest.mark.parametrize("arg, named", [("seed=xyz", "-T seed='xyz'"), ("max_turns=abc", "-T max_turns='abc'"),
                                        ("max_turns=-1", "-T max_turns=-1"),
                                        ("episode_timeout_s=0", "-T episode_timeout_s=0")])
def test_a_bad_number_is_one_line_without_traceback(arg, named, tmp_path):
    r = run(["inspect", "eval", "lis/math", "--model", "lis-mock/model", "-T", arg, "--log-dir", str(tmp_path)],
            check=False)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and f"error: lis/math: {named}" in out and "Traceback" not in out, out


def test_the_offline_mock_runs_as_the_docs_write_it(tmp_path):
    """docs/inspect.md's offline command, from outside the checkout: a real sandbox episode, scored 0."""
    r = run(["inspect", "eval", "lis/math", "--model", "lis-mock/model", "-T", "limit=1", "--log-dir",
             str(tmp_path / "logs"), "--log-format", "json", "--display", "plain"], cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    (path,) = sorted((tmp_path / "logs").glob("*.json"))
    log = json.loads(path.read_text())
    assert log["status"] == "success"
    (sample,) = log["samples"]
    rec = sample["store"]["lis:trajectory"]
    assert rec["termination"] == "submitted" and rec["answer"] == "lis-mock" and not sample.get("error")
    assert [c["tool"] for s in rec["steps"] for c in s["calls"]] == ["execute_bash", "submit"]
    assert sample["scores"]["lis_scorer"]["value"] == 0
    assert "inspect eval lis/math --model lis-mock/model -T limit=1" in (ROOT / "docs/inspect.md").read_text()


def _chat_through_inspect(outputs, left_s: float | None = None):
    """InspectChatModel.chat (from a worker thread, as the solver calls it) on mockllm ``outputs``, inside a
    deadline scope of ``left_s`` seconds; returns the result or the exception it raised."""
    import anyio
    import anyio.to_thread
    from inspect_ai.model import get_model

    from lis.inspect.model_bridge import InspectChatModel
    from lis.util import deadline

    bridge = InspectChatModel(get_model("mockllm/model", custom_outputs=outputs, memoize=False))

    def call():
        until = None if left_s is None else time.monotonic() + left_s
        with deadline.scope(until=until):
            try:
                return bridge.chat([{"role": "user", "content": "hi"}])
            except Exception as e:  # noqa: BLE001
                return e

    async def main():
        return await anyio.to_thread.run_sync(call)

    return anyio.run(main)


def test_a_reply_without_choices_is_asked_again_then_a_model_error_not_an_index_error(monkeypatch):
    from inspect_ai.model import ModelOutput, ModelUsage

    from lis.inspect.model_bridge import ATTEMPTS
    from lis.models.base import ModelError

    monkeypatch.setenv("LIS_BACKOFF_S", "0.01")
    usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    empty = ModelOutput(model="mockllm/model", choices=[], usage=usage)
    got = _chat_through_inspect([empty] * ATTEMPTS)
    assert isinstance(got, ModelError) and "no choices" in str(got) and f"after {ATTEMPTS} attempts" in str(got), \
        repr(got)
    good = ModelOutput.from_content("mockllm/model", "fine")
    good.usage = usage
    got = _chat_through_inspect([empty, good])  # asked again, as lis's own client asks: the second reply counts
    assert got.message["content"] == "fine", repr(got)



def test_inspect_eval_meets_every_bad_reply_and_keeps_each_episode(math_project, tmp_path):
    """Every turn type of the hostile server (tests/models/test_hostile_upstream.py's AFTER_ONE), one per sample
    of one `inspect eval` (one sample at a time, so in order), each followed by a good reply: every sample
    ends with its episode's record and answer, as under `lis run`; a reply Inspect's provider cannot use is
    retried by Inspect; nothing escapes as a traceback or a lost record."""
    from tests.models.test_hostile_upstream import AFTER_ONE, _script

    names = sorted(AFTER_ONE)
    run(["lis", "tasks", "--domain", "math", "--profile", "ci", "--limit", str(len(names)), "--out",
         "data/tasks/math.jsonl"], cwd=math_project)
    with HostileServer(_script(names)) as srv:
        r, wall, log = _eval(math_project, srv.base_url, tmp_path / "logs", "--max-samples", "1",
                             "--max-connections", "1", limit=len(names))
        served = list(srv.served)
    assert served[:2] == _script(names)[:2] and len(served) >= len(_script(names)), served
    samples = log["samples"]
    assert len(samples) == len(names), [s.get("error") for s in samples]
    recs = [s["store"]["lis:trajectory"] for s in samples]
    assert all(not s.get("error") for s in samples), [s["error"]["message"][:300] for s in samples if s.get("error")]
    assert all(rec["termination"] == "submitted" and rec["answer"] == "42" for rec in recs), \
        [(rec["termination"], rec["answer"], rec["error"]) for rec in recs]
    assert "Traceback" not in r.stderr and wall < 240, wall

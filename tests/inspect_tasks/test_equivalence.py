"""The same three tasks, the same scripted model, through ``lis eval run`` and through ``inspect eval
lis/math``: the same requests reach the model (messages and seeds), and the same tool calls,
observations, answers, endings and scores come out, turn by turn.

One real OpenAI-compatible server (lis.models.server.ChatServer) serves a replaying model
(tests/inspect_tasks/replay.py) to both: lis's OpenAI backend, and Inspect's ``openai-api``
provider. Both run real Docker sandboxes of the ci profile."""
from __future__ import annotations

import json
from typing import Any

import pytest

from lis.models.server import ChatServer
from tests.conftest import run
from tests.inspect_tasks.conftest import add_replay_model, inspect_env, inspect_eval, read_log
from tests.inspect_tasks.replay import ReplayModel, equivalence_scripts

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _request(messages: list[dict[str, Any]]) -> list[tuple]:
    """What the model was given, client formatting aside: role, text, tool calls (name, parsed
    arguments, id) and the call a tool result answers."""
    out = []
    for m in messages:
        calls = tuple((c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"), c.get("id"))
                      for c in m.get("tool_calls") or [])
        out.append((m["role"], m.get("content") or "", json.dumps(calls, sort_keys=True), m.get("tool_call_id")))
    return out


def _lis_turns(rec: dict) -> list[dict]:
    """Turns from lis's record: the observation as the conversation holds it (the tool message, with
    the "Steps Remaining" line the loop adds to the newest message), the rest from the step."""
    results = {m["tool_call_id"]: m["content"] for m in rec["messages"] if m["role"] == "tool"}
    return [{"content": s["content"] or "",
             "calls": [(c["tool"], c["arguments"], results[c["id"]], c["exit_code"], c["error"], c["timed_out"],
                        c["observation_chars"]) for c in s["calls"]]}
            for s in rec["steps"]]


def _inspect_turns(sample: dict) -> list[dict]:
    """Turns from the Inspect log: each assistant message's text and tool calls, with the observation
    from the tool message that answers it, and exit code / error from the episode summary."""
    results = {m["tool_call_id"]: m["content"] for m in sample["messages"] if m["role"] == "tool"}
    steps = sample["store"]["lis:trajectory"]["steps"]
    turns = []
    for step, msg in zip(steps, [m for m in sample["messages"] if m["role"] == "assistant"]):
        text = msg["content"] if isinstance(msg["content"], str) else "".join(
            p.get("text", "") for p in msg["content"] if p.get("type") == "text")
        calls = []
        for call, rec in zip(msg.get("tool_calls") or [], step["calls"]):
            observation = results[call["id"]]
            if isinstance(observation, list):
                observation = "".join(p.get("text", "") for p in observation)
            calls.append((rec["tool"], rec["arguments"], observation, rec["exit_code"], rec["error"],
                          rec["timed_out"], rec["observation_chars"]))
        turns.append({"content": text, "calls": calls})
    return turns


def test_lis_eval_and_inspect_eval_give_the_same_episodes(math_project, tmp_path):
    from lis.tasks import read_tasks

    tasks = read_tasks(math_project / "data/tasks/math.jsonl")
    assert len(tasks) == 3
    model = ReplayModel(equivalence_scripts(tasks))
    with ChatServer(model) as srv:
        add_replay_model(math_project, srv.base_url)
        run(["lis", "eval", "run", "--model", "replay", "--domain", "math", "--mode", "sandbox", "--profile", "ci"],
            cwd=math_project, env={"REPLAY_API_KEY": "x"})
        lis_requests, lis_calls = list(srv.requests), list(model.calls)
        srv.requests.clear()
        model.calls.clear()
        logs = tmp_path / "logs"
        inspect_eval(["lis/math", "--model", "openai-api/replay/replay", "-T", "mode=sandbox", "-T", "profile=ci",
                      "-T", f"params={math_project}", "-T", f"tasks_file={math_project / 'data/tasks/math.jsonl'}",
                      "--log-dir", str(logs), "--log-format", "json"], env=inspect_env(srv.base_url))
        inspect_requests, inspect_calls = list(srv.requests), list(model.calls)

    lis_records = {json.loads(line)["task_id"]: json.loads(line) for line in
                   (math_project / "data/eval/replay/math/sandbox/trajectories.jsonl").read_text().splitlines()}
    log = read_log(logs)
    assert log["status"] == "success", log.get("error")
    samples = {s["id"]: s for s in log["samples"]}
    assert set(samples) == set(lis_records) == {t.id for t in tasks}

    # 1. the model was asked the same things: per task and turn, the same conversation and seed
    def by_turn(calls, requests):
        seeds = {}
        for req in requests:
            first = next(m for m in req["messages"] if m["role"] == "user")["content"]
            key = (next(k for k in model.scripts if k in first), sum(m["role"] == "assistant" for m in req["messages"]))
            seeds[key] = req.get("seed")
        return {(marker, turn): _request(msgs) for marker, turn, msgs in calls}, seeds

    lis_by_turn, lis_seeds = by_turn(lis_calls, lis_requests)
    inspect_by_turn, inspect_seeds = by_turn(inspect_calls, inspect_requests)
    assert sorted(lis_by_turn) == sorted(inspect_by_turn) and len(lis_by_turn) == 12  # 3 tasks x 4 turns
    for key in sorted(lis_by_turn):
        assert inspect_by_turn[key] == lis_by_turn[key], key
    assert inspect_seeds == lis_seeds and all(isinstance(s, int) for s in lis_seeds.values())

    # 2. the same turns, tool calls, observations, exit codes, answers, endings and scores
    for task in tasks:
        rec, sample = lis_records[task.id], samples[task.id]
        kept = sample["store"]["lis:trajectory"]
        assert _inspect_turns(sample) == _lis_turns(rec), task.id
        assert kept["answer"] == rec["answer"] and kept["termination"] == rec["termination"], task.id
        assert kept["turns"] == rec["turns"] and kept["prompt_tokens"] == rec["prompt_tokens"], task.id
        assert kept["seed"] == rec["seed"]
        steps = [{**{k: v for k, v in st.items() if k not in ("completion_ids", "logprobs")},
                  "calls": [{k: v for k, v in c.items() if k != "observation"} for c in st["calls"]]}
                 for st in rec["steps"]]
        assert _stable(kept["steps"]) == _stable(steps), task.id  # every field of every step and call
        score = sample["scores"]["lis_scorer"]
        assert score["value"] == rec["reward"] and score["metadata"]["scorer"] == rec["score"]["scorer"], task.id
        assert score["metadata"]["details"] == rec["score"]["details"], task.id
    ends = {t.id: lis_records[t.id]["termination"] for t in tasks}
    assert ends == {tasks[0].id: "submitted", tasks[1].id: "submitted", tasks[2].id: "max_turns"}
    assert [lis_records[t.id]["reward"] for t in tasks] == [1.0, 0.0, 1.0]

    # 3. the accuracy and its interval: metrics.json and the log's results agree
    metrics = json.loads((math_project / "data/eval/replay/math/sandbox/metrics.json").read_text())
    got = {m["name"]: m["value"] for m in log["results"]["scores"][0]["metrics"].values()}
    assert got["accuracy"] == pytest.approx(metrics["accuracy"], abs=1e-4)
    assert [got["ci95_low"], got["ci95_high"]] == pytest.approx(metrics["ci95"], abs=1e-4)

    # 4. the lis job exported for Inspect View holds what the Inspect run logged: the same messages
    #    (tool calls and observations), scores and store, sample by sample
    from inspect_ai.log import read_eval_log

    run(["lis", "export", "inspect", "data/eval/replay/math/sandbox", "--out", str(tmp_path / "exported")],
        cwd=math_project)
    (exported,) = (tmp_path / "exported").glob("*.eval")
    ported = read_eval_log(str(exported))
    assert ported.eval.task == log["eval"]["task"] == "lis/math" and ported.eval.task_args == {"mode": "sandbox"}
    for s in ported.samples:
        theirs = samples[s.id]
        assert s.epoch == theirs["epoch"] and s.target == theirs["target"]
        assert _messages(s.model_dump(mode="json")["messages"]) == _messages(theirs["messages"]), s.id
        assert [m.model_dump(mode="json") for m in s.input] == theirs["input"] or _messages(
            [m.model_dump(mode="json") for m in s.input]) == _messages(theirs["input"]), s.id
        # the input Inspect View shows is the problem; the system prompt stays first in the messages
        assert [m.role for m in s.input] == ["user"] and s.messages[0].role == "system", s.id
        assert s.scores["lis_scorer"].value == theirs["scores"]["lis_scorer"]["value"]
        assert _stable(s.store["lis:trajectory"]["steps"]) == _stable(theirs["store"]["lis:trajectory"]["steps"])
        assert [e.event for e in s.events if e.event in ("model", "tool")] == [
            e["event"] for e in theirs["events"] if e["event"] in ("model", "tool")]
    got = {k: m.value for k, m in ported.results.scores[0].metrics.items()}
    assert got["accuracy"] == pytest.approx(metrics["accuracy"]) and [got["ci95_low"], got["ci95_high"]] == \
        pytest.approx(metrics["ci95"])


def _stable(steps: list[dict]) -> list[dict]:
    """Episode steps without their timings."""
    timing = ("llm_latency_s", "exec_time_s")
    return [{**{k: v for k, v in st.items() if k not in timing},
             "calls": [{k: v for k, v in c.items() if k not in timing} for c in st["calls"]]} for st in steps]


def _messages(messages: list[dict]) -> list[tuple]:
    """Inspect messages without their ids and sources: role, text, tool calls, the call answered."""
    out = []
    for m in messages:
        content = m["content"]
        text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
        calls = [(c["id"], c["function"], c["arguments"]) for c in m.get("tool_calls") or []]
        out.append((m["role"], text, calls, m.get("tool_call_id")))
    return out

"""The token split of docs/efficiency.md on conversations with known usage: hand-made records, and one
real episode (real sandbox, real HTTP server with a scripted model whose usage is deterministic)."""
from __future__ import annotations

import json

import pytest

from lis.analysis.efficiency_tokens import MISSING, NO_CALLS, REPORTED, episode_efficiency, split_usage


def test_split_of_a_conversation_with_known_usage():
    # call 1: 100-token prompt, 20 generated; the environment adds 60; call 2 sees 180 = 100 + 20 + 60;
    # call 3 sees 260 = 180 + 30 + 50
    s = split_usage([(100, 20, 0), (180, 30, 64), (260, 10, 128)])
    assert s.usage == REPORTED and s.calls == 3
    assert (s.prompt, s.model, s.env, s.total) == (100, 60, 110, 270)
    assert s.total == 260 + 10                      # p_K + c_K
    assert s.env_per_turn == [60, 50] and s.negative_env_turns == 0
    assert s.billed_prompt == 100 + 180 + 260 and s.billed_total == 540 + 60   # the cost view
    assert s.cached == 192


def test_vanilla_is_one_call_without_environment_tokens():
    s = split_usage([(1234, 567, None)])
    assert (s.prompt, s.model, s.env, s.total, s.billed_total) == (1234, 567, 0, 1801, 1801)
    assert s.cached is None  # not reported is not zero


@pytest.mark.parametrize("usage", [[(100, 20, 0), (None, None, None)],   # a provider that reports nothing
                                   [(100, 20, 0), (0, 0, 0)],            # ... or zeros (a proxy's default)
                                   [(100, None, 0)]])
def test_missing_usage_marks_the_episode_and_invents_nothing(usage):
    s = split_usage(usage)
    assert s.usage == MISSING and s.calls == len(usage)
    assert s.prompt is s.model is s.env is s.total is s.billed_total is None


def test_no_model_call():
    assert split_usage([]).usage == NO_CALLS


def test_a_template_that_drops_reasoning_gives_a_negative_turn_that_is_counted():
    # turn 1 generated 50 tokens of which 40 (reasoning) the template drops from the next prompt;
    # the tool added 10: p_2 = 100 + 50 - 40 + 10 = 120
    s = split_usage([(100, 50, 0), (120, 5, 0)])
    assert s.env_per_turn == [-30] and s.negative_env_turns == 1
    assert s.total == 125 == s.prompt + s.model + s.env


def record(steps, **kw):
    base = {"task_id": "t1", "model": "m", "domain": "math", "mode": "sandbox", "repeat": 0,
            "termination": "submitted", "wall_s": 10.0, "sandbox_start_s": 0.5}
    return {**base, **kw, "steps": steps}


def step(p, c, latency, *exec_times, cached=0, obs=100):
    return {"prompt_tokens": p, "completion_tokens": c, "cached_tokens": cached, "llm_latency_s": latency,
            "calls": [{"exec_time_s": t, "observation_chars": obs} for t in exec_times]}


def test_episode_record_gives_tokens_and_time_shares():
    e = episode_efficiency(record([step(100, 20, 2.0, 0.5, 0.25), step(180, 30, 3.0, 0.25), step(260, 10, 1.0)]))
    assert e.included and e.turns == 3 and e.tool_calls == 3 and e.observation_chars == 300
    assert e.tokens.env == 110 and e.tokens.total == 270
    assert e.llm_s == 6.0 and e.env_s == 1.0
    assert e.env_time_share == pytest.approx(0.1) and e.llm_time_share == pytest.approx(0.6)
    row = e.flat()
    assert row["tokens_env"] == 110 and row["env_time_share"] == pytest.approx(0.1) and "tokens_env_per_turn" not in row


def test_infrastructure_errors_are_not_included():
    for t in ("model_error", "sandbox_error", "error", "interrupted"):
        assert not episode_efficiency(record([step(100, 20, 1.0)], termination=t)).included
    for t in ("submitted", "max_turns", "token_budget", "timeout", "answered", "truncated"):
        assert episode_efficiency(record([step(100, 20, 1.0)], termination=t)).included


@pytest.mark.docker
def test_split_of_a_real_episode_through_a_real_server(base_config):
    from lis.agent import AgentConfig, run_task
    from lis.models.openai_compat import OpenAIChatModel
    from lis.models.scripted import ScriptedModel, assistant, tool_call
    from lis.models.server import ChatServer
    from lis.sandbox import SandboxPool
    from lis.tasks.schema import Task

    task = Task(id="six-seven", domain="math", problem_statement="What is 6*7? Answer in \\boxed{}.", ground_truth="42")
    replies = [assistant("Let me compute.", tool_call("execute_bash", {"command": "ls /testbed; python3 -c 'print(6*7)'"})),
               assistant(None, tool_call("execute_bash", {"command": "seq 1 200 | tail -n 3; echo '\\boxed{42}' > /testbed/answer.txt"})),
               assistant("Done.", tool_call("submit", {}))]
    scripted = ScriptedModel(replies, name="scripted")
    with ChatServer(scripted) as srv, SandboxPool(base_config, max_concurrent=1) as pool:
        client = OpenAIChatModel("scripted", base_url=srv.base_url, api_key="x", max_retries=0)
        rec = run_task(task, client, "sandbox", AgentConfig(max_turns=5), pool=pool)
    assert rec.termination == "submitted" and rec.answer == "\\boxed{42}"
    e = episode_efficiency(json.loads(json.dumps(rec.to_dict())))   # as read back from trajectories.jsonl

    # What the server reported, recomputed from what it received (the scripted model's own rule:
    # characters of the JSON messages / 4): exact, no estimate.
    p = [sum(len(json.dumps(m)) for m in msgs) // 4 for msgs in scripted.calls]
    c = [len(json.dumps(r)) // 4 for r in replies]
    assert [s.prompt_tokens for s in rec.steps] == p and [s.completion_tokens for s in rec.steps] == c
    t = e.tokens
    assert t.usage == REPORTED and t.calls == 3
    assert t.prompt == p[0] and t.model == sum(c)
    assert t.env_per_turn == [p[1] - p[0] - c[0], p[2] - p[1] - c[1]]
    assert t.total == p[2] + c[2] == t.prompt + t.model + t.env
    assert t.billed_total == sum(p) + sum(c) and t.cached == 0
    # Independently: what the environment added between calls k and k+1 is the tool messages (the
    # observation, its JSON envelope, "Steps Remaining") plus any difference between the assistant
    # message as the client sent it back and as the model produced it; up to the /4 rounding.
    for k, env in enumerate(t.env_per_turn):
        sent_back = scripted.calls[k + 1][len(scripted.calls[k])]
        assert sent_back["role"] == "assistant"
        tools = [m for m in scripted.calls[k + 1][len(scripted.calls[k]) + 1:]]
        assert [m["role"] for m in tools] == ["tool"] and tools[-1]["content"].endswith(f"Steps Remaining: {4 - k}")
        assert rec.steps[k].calls[0].observation in tools[0]["content"]
        added = sum(len(json.dumps(m)) for m in tools) + len(json.dumps(sent_back)) - len(json.dumps(replies[k]))
        assert abs(env - added / 4) <= 2, (k, env, added)
    assert e.env_s > 0 and e.llm_s > 0 and 0 < e.env_time_share < 1 and 0 < e.llm_time_share < 1

"""The episode loop with a scripted model in a real sandbox."""
from __future__ import annotations

import json

import pytest

from lis.agent import AgentConfig, Trajectory, run_episode
from lis.agent.loop import CONTINUE_MSG
from lis.models.base import ContextLengthError, ModelError
from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.util.jsonl import append_jsonl, read_jsonl

pytestmark = pytest.mark.docker
START = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Solve it."}]


def episode(sb, replies, **cfg):
    model = ScriptedModel(replies)
    rec = Trajectory(task_id="t1", model="scripted", mode="sandbox")
    run_episode(model, sb, START, AgentConfig(**cfg), rec)
    return rec, model


def bash(cmd):
    return tool_call("execute_bash", {"command": cmd})


def test_solves_and_submits(sb):
    rec, model = episode(sb, [
        assistant("look", bash("cd /testbed && ls")),
        assistant(None, tool_call("str_replace_editor", {"command": "create", "path": "/testbed/answer.txt",
                                                          "file_text": "\\boxed{42}\n"})),
        assistant("done", tool_call("submit", {})),
    ])
    assert rec.termination == "submitted" and rec.answer == "\\boxed{42}" and rec.turns == 3
    assert [c.tool for s in rec.steps for c in s.calls] == ["execute_bash", "str_replace_editor", "submit"]
    assert rec.steps[0].calls[0].arguments == {"command": "cd /testbed && ls"}
    assert rec.steps[0].calls[0].exit_code == 0 and rec.steps[0].calls[0].exec_time_s > 0
    assert rec.prompt_tokens > 0 and rec.completion_tokens > 0 and rec.wall_s > 0
    # "Steps Remaining" counts down on the newest message; earlier messages are not rewritten
    sent = model.calls
    assert sent[0][-1]["content"].endswith("Steps Remaining: 100")
    assert sent[1][-1]["role"] == "tool" and sent[1][-1]["content"].endswith("Steps Remaining: 99")
    assert sent[2][1]["content"].endswith("Steps Remaining: 100")


def test_answer_is_read_without_submit_and_max_turns_ends(sb):
    rec, _ = episode(sb, [assistant(None, bash("echo 7 > /testbed/answer.txt")), assistant(None, bash("true"))],
                     max_turns=2)
    assert rec.termination == "max_turns" and rec.answer == "7"


def test_no_tool_call_gets_the_reminder(sb):
    rec, model = episode(sb, ["I think the answer is 3.", assistant(None, tool_call("submit", {}))])
    assert rec.termination == "submitted"
    assert model.calls[1][-1] == {"role": "user", "content": CONTINUE_MSG + "\nSteps Remaining: 99"}


def test_text_tool_calls_are_parsed(sb):
    text = 'Let me check.\n<tool_call>\n{"name": "execute_bash", "arguments": {"command": "echo hi"}}\n</tool_call>'
    rec, model = episode(sb, [text, assistant(None, tool_call("submit", {}))])
    step = rec.steps[0]
    assert step.text_tool_calls and step.calls[0].tool == "execute_bash" and "hi" in step.calls[0].observation
    sent = model.calls[1]
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "execute_bash"
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == sent[-2]["tool_calls"][0]["id"]


def test_malformed_calls_are_recoverable(sb):
    broken = {"id": "c1", "type": "function", "function": {"name": "execute_bash", "arguments": "{'command': ls}"}}
    rec, _ = episode(sb, [
        assistant(None, broken),
        "<tool_call>{not json</tool_call>",
        assistant(None, tool_call("delete_everything", {})),
        assistant(None, tool_call("execute_bash", {})),
        assistant(None, tool_call("submit", {})),
    ])
    errors = [s.calls[0].error for s in rec.steps[:4]]
    assert errors == ["bad_json", "bad_json", "unknown_tool", "missing_argument"]
    assert rec.termination == "submitted"


def test_every_parallel_call_runs_and_is_answered(sb):
    rec, model = episode(sb, [assistant(None, bash("echo a > /testbed/a"), bash("echo b > /testbed/b")),
                              assistant(None, tool_call("submit", {}))])
    assert len(rec.steps[0].calls) == 2
    sent = model.calls[1]
    assert [m["role"] for m in sent[-3:]] == ["assistant", "tool", "tool"]
    assert sb.exec("cat /testbed/a /testbed/b").stdout == "a\nb\n"


def test_token_budget_ends_the_episode(sb):
    rec, _ = episode(sb, [assistant(None, bash("seq 1 5000")), assistant(None, bash("true"))],
                     max_context_tokens=120)
    assert rec.termination == "token_budget" and rec.turns == 1


class _Raises:
    name = "raises"

    def __init__(self, exc):
        self.exc = exc

    def chat(self, messages, tools=None, sampling=None):
        raise self.exc


def test_model_errors_end_the_episode_with_a_reason(sb):
    for exc, reason in [(ModelError("server gone"), "model_error"), (ContextLengthError("too long"), "token_budget")]:
        rec = Trajectory(task_id="t", model="x", mode="sandbox")
        run_episode(_Raises(exc), sb, START, AgentConfig(), rec)
        assert rec.termination == reason and rec.error


def test_episode_timeout_fires(sb):
    rec, _ = episode(sb, [assistant(None, bash("sleep 30")), assistant(None, bash("true"))], episode_timeout_s=2)
    assert rec.termination == "timeout" and rec.wall_s < 15
    assert rec.steps[0].calls[0].timed_out


def test_record_round_trips_through_jsonl(sb, tmp_path):
    rec, _ = episode(sb, [assistant("x", bash("echo hi")), assistant(None, tool_call("submit", {}))])
    path = tmp_path / "t.jsonl"
    append_jsonl(path, rec.to_dict())
    with open(path, "a") as f:
        f.write('{"torn": ')  # a crash mid-write
    back = [Trajectory.from_dict(d) for d in read_jsonl(path, mode="tolerant")]
    assert len(back) == 1 and back[0].to_dict() == json.loads(json.dumps(rec.to_dict()))


def test_a_seeded_episode_draws_each_turn_from_its_own_stream(sb):
    """Turn k of an episode with sampling seed s asks the model with seed s + k × TURN_SEED_STEP: one
    seed on every turn would reuse the same random numbers, making a turn's draw depend on earlier ones."""
    from lis.models.base import TURN_SEED_STEP, Sampling

    class Recording(ScriptedModel):
        def chat(self, messages, tools=None, sampling=None):
            self.asked.append(None if sampling is None else sampling.seed)
            return super().chat(messages, tools, sampling)

    for seed, want in ((5, [5, 5 + TURN_SEED_STEP, 5 + 2 * TURN_SEED_STEP]), (None, [None, None, None])):
        model = Recording([assistant(None, bash("true")), assistant(None, bash("true")),
                           assistant("done", tool_call("submit", {}))])
        model.asked = []
        run_episode(model, sb, START, AgentConfig(sampling=Sampling(temperature=0.7, seed=seed)),
                    Trajectory(task_id="t1", model="scripted", mode="sandbox"))
        assert model.asked == want
    assert Sampling(seed=3).for_turn(0).seed == 3 and Sampling().for_turn(4).seed is None

"""The parts of `lis serve` on their own: the conversation → task mapping, request limits, the
completion-token budget, admission, and one episode's own cancellation (real sandbox)."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from lis.agent import AgentConfig, run_task
from lis.models.base import ChatResult, ContextLengthError, Sampling, Usage
from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.sandbox import make_sandbox
from lis.serve.admission import Admission, ShuttingDown
from lis.serve.budget import BudgetedModel
from lis.serve.conversation import problem_statement
from lis.serve.errors import ApiError
from lis.serve.request import parse
from lis.serve.settings import Limits
from lis.tasks.schema import Task
from tests.sandbox.conftest import base_config  # noqa: F401  (session fixture: the test image, small limits)

CAPS = Limits(max_turns=10, timeout_s=60, max_completion_tokens=1000)


def test_one_message_is_the_task_as_is():
    assert problem_statement([{"role": "user", "content": "Count the lines of /testbed/input/a.csv"}]) == \
        "Count the lines of /testbed/input/a.csv"


def test_earlier_messages_become_context_before_the_task():
    text = problem_statement([
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": [{"type": "text", "text": "My name is Ada."}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"Ada\"}"}}]},
        {"role": "tool", "name": "lookup", "tool_call_id": "1", "content": "found"},
        {"role": "developer", "content": "Answer in English."},
        {"role": "user", "content": "What is my name?"}])
    assert text == ("<instructions>\nBe terse.\n\nAnswer in English.\n</instructions>\n\n<conversation>\n"
                    "[user]\nMy name is Ada.\n\n[assistant]\n[assistant called lookup({\"q\": \"Ada\"})]\n\n"
                    "[tool lookup]\nfound\n</conversation>\n\n"
                    "The current request (answer this one, using the above as context):\nWhat is my name?")


def test_request_limits_are_clamped_to_the_caps():
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 10**9,
            "lis": {"max_turns": 500, "timeout_s": 5}}
    req = parse(body, "m", CAPS)
    assert req.limits == Limits(max_turns=10, timeout_s=5.0, max_completion_tokens=1000)
    req = parse({**body, "max_completion_tokens": 300, "lis": {}}, "m", CAPS)  # the newer name wins
    assert req.limits == Limits(max_turns=10, timeout_s=60.0, max_completion_tokens=300)
    req = parse({"model": "m", "messages": [{"role": "user", "content": "x"}], "user": "u1", "temperature": 0,
                 "seed": 3}, "m", CAPS)
    assert req.ignored == ["user"] and req.sampling.temperature == 0 and req.sampling.seed == 3
    with pytest.raises(ApiError, match="only allowed with stream: true"):
        parse({"model": "m", "messages": [{"role": "user", "content": "x"}],
               "stream_options": {"include_usage": True}}, "m", CAPS)


class Recording:
    """A model that answers with a fixed completion size and records the sampling it was asked with."""

    name = "rec"

    def __init__(self, completion_tokens: int):
        self.n = completion_tokens
        self.asked: list[Sampling] = []

    def chat(self, messages, tools=None, sampling=None) -> ChatResult:
        self.asked.append(sampling)
        return ChatResult(message={"role": "assistant", "content": "x"}, usage=Usage(10, self.n, 0), latency_s=0.0)


def test_budget_spans_the_whole_episode():
    inner = Recording(completion_tokens=60)
    m = BudgetedModel(inner, 100, Sampling(temperature=0.2))
    m.chat([], None, Sampling(temperature=0.9, max_tokens=4096))
    m.chat([], None, Sampling(max_tokens=4096))
    assert [s.max_tokens for s in inner.asked] == [100, 40]          # each call asks for what is left
    assert [s.temperature for s in inner.asked] == [0.2, 0.2]        # the request's sampling wins
    with pytest.raises(ContextLengthError, match="budget \\(100\\) is spent"):
        m.chat([], None, None)
    assert len(inner.asked) == 2


def test_admission_bounds_running_and_waiting():
    async def main():
        adm = Admission(max_running=1, max_queued=1)
        never = lambda: asyncio.sleep(0, result=False)  # noqa: E731
        assert await adm.acquire(5, never) is True
        waiter = asyncio.create_task(adm.acquire(5, never, poll_s=0.01))
        await asyncio.sleep(0.05)
        assert adm.queued == 1
        with pytest.raises(ApiError) as e:
            await adm.acquire(5, never)
        assert e.value.status == 429
        adm.release()                                   # the slot passes to the waiter
        assert await waiter is True and adm.running == 1
        gone = asyncio.create_task(adm.acquire(5, lambda: asyncio.sleep(0, result=True), poll_s=0.01))
        assert await gone is False and adm.queued == 0  # a client that left gives its place up
        with pytest.raises(ApiError, match="queue_timeout_s=0.05"):
            await adm.acquire(0.05, never, poll_s=0.01)
        last = asyncio.create_task(adm.acquire(5, never, poll_s=0.01))
        await asyncio.sleep(0.05)
        adm.close()
        with pytest.raises(ShuttingDown):
            await last
        adm.release()
        assert adm.running == 0

    asyncio.run(main())


@pytest.mark.docker
def test_should_stop_ends_only_its_episode(base_config):  # noqa: F811
    """An episode's own token ends it before its next call (the global cancel is not touched), and
    killing its sandbox mid-command ends it at once as interrupted, not as a sandbox error."""
    stop = threading.Event()
    model = ScriptedModel([assistant(None, tool_call("execute_bash", {"command": "echo one"})),
                           assistant(None, tool_call("execute_bash", {"command": "echo two"}))], name="s")
    task = Task(id="t", domain="general", problem_statement="x", ground_truth="")
    with make_sandbox(base_config).start() as sb:
        rec = run_task(task, model, "sandbox", AgentConfig(max_turns=5), sandbox=sb,
                       on_step=lambda step: stop.set(), should_stop=stop.is_set)
    assert rec.termination == "interrupted" and rec.turns == 1 and model.remaining == 1

    model = ScriptedModel([assistant(None, tool_call("execute_bash", {"command": "sleep 60"}))], name="s")
    stop = threading.Event()
    sb = make_sandbox(base_config).start()
    box: dict = {}
    t = threading.Thread(target=lambda: box.update(rec=run_task(task, model, "sandbox", AgentConfig(max_turns=5),
                                                                sandbox=sb, should_stop=stop.is_set)))
    t.start()
    time.sleep(3)  # the command runs
    t0 = time.monotonic()
    stop.set()
    sb.kill()
    t.join(30)
    assert time.monotonic() - t0 < 10
    assert box["rec"].termination == "interrupted"
    sb.close()
    assert sb.closed

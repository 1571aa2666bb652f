"""Token exactness of GRPO rollouts on the chat template we ship: what the policy is trained on is
the ids it sampled plus the environment's ids, with no drift from a full render and no
environment token in the loss. Real loop, real sandbox, real tokenizer (the tiny model's)."""
from __future__ import annotations

import pytest

from lis.models.base import Sampling
from lis.models.sampler import Draw
from lis.models.scripted import assistant, tool_call
from lis.tasks.schema import Task
from lis.train.rollout.session import TokenSession

pytestmark = [pytest.mark.docker, pytest.mark.training]


class ReplayPolicy:
    """A policy that "samples" the canonical token ids of given assistant messages (the ids the chat
    template's own rendering gives), with the LocalHFModel interface a TokenSession uses."""

    def __init__(self, tokenizer, replies, end_variant: int | None = None):
        from trl.chat_template_utils import add_response_schema

        self.tokenizer = tokenizer
        if getattr(tokenizer, "response_template", None) is None:
            add_response_schema(tokenizer)
        self.replies = list(replies)
        eos = tokenizer.eos_token_id
        self.stop_ids = {eos, tokenizer.pad_token_id}
        self.end_variant = end_variant   # emit this id instead of <|im_end|> (another declared end-of-turn)
        self.sampled: list[list[int]] = []

    def render(self, messages, tools=None):
        from lis.models.toolcalls import arguments_as_dicts

        return list(self.tokenizer.apply_chat_template(arguments_as_dicts(messages), tools=tools or None,
                                                       add_generation_prompt=True, tokenize=True, return_dict=False))

    def generate_ids(self, prompt_ids, max_new, sampling):
        from lis.train.rehearsal.scripted import assistant_ids

        ids = assistant_ids(self.tokenizer, self.replies.pop(0))
        if self.end_variant is not None:
            ids[-1] = self.end_variant
        self.sampled.append(ids)
        return Draw(ids, [-0.5] * len(ids), True)

    def parse(self, completion_ids, prompt_ids, tools=None):
        from lis.models.toolcalls import normalize_tool_calls

        parsed = self.tokenizer.parse_response(completion_ids, prefix=prompt_ids, tools=tools or None)
        calls = normalize_tool_calls(parsed.get("tool_calls"), salt=len(prompt_ids))
        content = (parsed.get("content") or "").removesuffix(self.tokenizer.eos_token) or None
        return {"role": "assistant", "content": content, **({"tool_calls": calls} if calls else {})}


def _episode(tokenizer, sandbox, replies, end_variant=None):
    from lis.agent import AgentConfig, run_task

    task = Task(id="t1", domain="instruct_pretrain", problem_statement="What is the population of Arvel?",
                ground_truth="4821", input_files={"arvel.txt": "Town: Arvel\nPopulation: 4821\n"}, qa_type="free-form")
    policy = ReplayPolicy(tokenizer, replies, end_variant)
    session = TokenSession(policy, max_prompt_tokens=20000, max_episode_tokens=20000, sampling=Sampling(seed=1))
    rec = run_task(task, session, "sandbox", AgentConfig(max_turns=6), sandbox=sandbox)
    return rec, session, policy


REPLIES = [
    assistant(None, tool_call("execute_bash", {"command": "ls /testbed/documents"}, "c1")),
    assistant("Let me read it.", tool_call("execute_bash", {"command": "grep -i population /testbed/documents/arvel.txt"},
                                           "c2")),
    assistant("I forgot to call a tool."),   # the loop answers with its reminder (a user message)
    assistant(None, tool_call("execute_bash", {"command": "echo 4821 > /testbed/answer.txt"}, "c3")),
    assistant("Done.", tool_call("submit", {}, "c4")),
]


@pytest.fixture
def tokenizer(tiny_base_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_base_dir)


def test_incremental_ids_equal_a_full_render_and_no_environment_token_is_trained_on(tokenizer, sandbox):
    rec, session, policy = _episode(tokenizer, sandbox, REPLIES)
    assert rec.termination == "submitted" and rec.answer == "4821"
    assert session.drift_turns == 0 and session.isolated_renders == 0
    # the whole token sequence is the chat template's rendering of the conversation as recorded
    from lis.agent.tools.schemas import TOOLS

    full = policy.render(rec.messages[:-2], TOOLS)  # everything before the submit turn, and its header
    ids = session.prompt_ids + session.completion_ids
    assert ids[: len(full)] == full and ids[len(full):] == policy.sampled[-1]
    # mask 1 exactly on the sampled ids, in order; 0 on everything else
    trained = [t for t, m in zip(session.completion_ids, session.mask) if m]
    assert trained == [t for ids_ in policy.sampled for t in ids_]
    assert len(session.mask) == len(session.completion_ids) == len(session.logprobs)
    assert all(lp == 0.0 for lp, m in zip(session.logprobs, session.mask) if not m)
    env_text = tokenizer.decode([t for t, m in zip(session.completion_ids, session.mask) if not m])
    assert "<tool_response>" in env_text and "Steps Remaining" in env_text and "function call" in env_text
    sampled_text = tokenizer.decode(trained)
    assert "<tool_response>" not in sampled_text and "Steps Remaining" not in sampled_text
    assert "Population: 4821" in env_text and "Population" not in sampled_text  # the observation is not trained on


def test_every_declared_end_of_turn_id_ends_a_turn(tokenizer, sandbox):
    """A policy that ends its turns with <|endoftext|> (also declared in the generation config):
    the turn ends there, the environment's ids follow; the sequence then differs from a full render
    (which writes <|im_end|>), and the drift counter says so."""
    rec, session, policy = _episode(tokenizer, sandbox, REPLIES, end_variant=tokenizer.pad_token_id)
    assert rec.termination == "submitted"
    trained = [t for t, m in zip(session.completion_ids, session.mask) if m]
    assert trained == [t for ids_ in policy.sampled for t in ids_]
    assert session.drift_turns > 0

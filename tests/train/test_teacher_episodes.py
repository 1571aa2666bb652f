"""The scripted teacher's episodes (simulated): real prompts, the agent loop's format, and observations
the real tools give (checked in a real sandbox). The tokenizer corpus is made of them."""
from __future__ import annotations

import hashlib
import json
import re

import pytest

from lis.agent.tools.schemas import TOOLS
from lis.offline.teacher.episodes import NO_LOSS, episodes
from lis.models.toolcalls import check_tool_call

pytestmark = [pytest.mark.training]

REMAINING = re.compile(r"\nSteps Remaining: (\d+)$")


@pytest.fixture(scope="module")
def eps():
    return episodes(400, 0)


def _calls(ep):
    return [m for m in ep.messages if m["role"] == "assistant" and not m.get(NO_LOSS)]


def episodes_sha256(eps) -> str:
    """A hash of ``eps`` (messages, tools, domain, mode)."""
    h = hashlib.sha256()
    for ep in eps:
        h.update(json.dumps([ep.messages, ep.tools, ep.domain, ep.mode], sort_keys=True, ensure_ascii=False).encode())
    return h.hexdigest()


def test_same_seed_same_episodes():
    assert episodes_sha256(episodes(20, 7)) == episodes_sha256(episodes(20, 7)) != episodes_sha256(episodes(20, 8))


def test_every_domain_and_mode_appears(eps):
    seen = {(e.domain, e.mode) for e in eps}
    for domain in ("math", "physics", "chem", "biomed", "long_context", "instruct_follow", "instruct_pretrain", "demo"):
        assert (domain, "sandbox") in seen and (domain, "vanilla") in seen, domain
    assert ("long_context", "sandbox_inline") in seen


def test_sample_tasks_carry_no_ground_truth():
    from lis.offline.teacher.tasks import SAMPLE_DOMAINS, sample_tasks

    samples = sample_tasks()
    assert set(samples) == set(SAMPLE_DOMAINS)
    assert all(t.ground_truth == "" for tasks in samples.values() for t in tasks)


def test_episodes_start_with_the_real_prompts(eps):
    from lis.prompts import render_prompts

    for e in eps:
        first = render_prompts(e.task, e.mode)
        n = len(first)
        assert [m["role"] for m in e.messages[:n]] == [m["role"] for m in first]
        assert [m["content"] for m in e.messages[:n - 1]] == [m["content"] for m in first[:-1]]
        assert e.messages[n - 1]["content"].startswith(first[-1]["content"])


def test_sandbox_episodes_follow_the_loop_format(eps):
    """Steps Remaining before every turn, counting down from max_turns; valid calls; the answer file
    written before the final submit."""
    from lis.prompts import layout

    sandbox = [e for e in eps if e.tools]
    assert len(sandbox) > 80
    for e in sandbox:
        start = 2  # system, user
        counts = []
        for i, m in enumerate(e.messages):
            if m["role"] == "assistant":
                counts.append(int(REMAINING.search(e.messages[i - 1]["content"]).group(1)))
        assert counts == list(range(counts[0], counts[0] - len(counts), -1)) and counts[-1] >= 1
        calls = _calls(e)
        assert all(check_tool_call(c["tool_calls"][0], TOOLS) is None for c in calls)
        assert calls[-1]["tool_calls"][0]["function"]["name"] == "submit"
        assert e.messages[-1] is calls[-1] and 2 <= len(calls) <= 6
        answer = layout(e.task, e.mode).answer_path
        wrote = [c for c in calls if answer in c["tool_calls"][0]["function"]["arguments"]]
        assert wrote, [c["tool_calls"][0]["function"]["arguments"] for c in calls]
        assert e.messages[start]["role"] == "assistant"


def test_vanilla_replies_have_the_domain_form(eps):
    from lis.offline.agent_check import answer_has_form

    vanilla = [e for e in eps if e.mode == "vanilla"]
    assert len(vanilla) > 20 and all(e.tools is None and len(e.messages) == 2 for e in vanilla)
    for e in vanilla:
        reply = e.messages[-1]["content"]
        assert answer_has_form(e.task, reply), (e.domain, reply)
        assert len(reply) < 400


def test_bad_turns_are_context_only(eps):
    from lis.agent.loop import CONTINUE_MSG

    bad = [(e, i) for e in eps for i, m in enumerate(e.messages) if m.get(NO_LOSS)]
    assert bad
    for e, i in bad:
        follow = e.messages[i + 1]
        assert (follow["role"], follow["content"].split("\nSteps")[0]) == ("user", CONTINUE_MSG) or (
            follow["role"] == "tool" and follow["content"].startswith("Error: your tool call could not be parsed"))


def test_encode_labels_exactly_the_trained_turns(tiny_model):
    """Labels = the ids of each trained-on assistant turn after its header, end token included;
    the same as rendering the conversation prefix by prefix (the definition)."""
    from lis.models.toolcalls import arguments_as_dicts
    from lis.train.sft.data import IGNORE, encode

    tok = tiny_model.tokenizer
    for e in episodes(12, 3):
        ex = encode(tok, e.messages, e.tools)
        conv = [{k: v for k, v in m.items() if k != NO_LOSS} for m in arguments_as_dicts(e.messages)]

        def render(msgs, gen=False):
            return list(tok.apply_chat_template(msgs, tools=e.tools, add_generation_prompt=gen, tokenize=True,
                                                return_dict=False))

        assert ex.ids == render(conv)
        want = [IGNORE] * len(ex.ids)
        for i, m in enumerate(e.messages):
            if m["role"] == "assistant" and not m.get(NO_LOSS):
                lo, hi = len(render(conv[:i], gen=True)), len(render(conv[:i + 1]))
                while ex.ids[hi - 1] != tok.eos_token_id:
                    hi -= 1
                want[lo:hi] = ex.ids[lo:hi]
        assert ex.labels == want


def test_length_batches_cover_everything_once():
    from lis.train.sft.data import Example, length_batches

    data = [Example([0] * n, [0] * n) for n in (5, 3, 9, 3, 7)]
    batches = length_batches(data, 2)
    assert [[len(x.ids) for x in b] for b in batches] == [[3, 3], [5, 7], [9]]
    assert sorted(id(x) for b in batches for x in b) == sorted(id(x) for x in data)


MARKERS = ("grep -n -i", "wc -c", "wc -l", "wc -w", "head -n", "head -c", '"view"', "view_range", "cat /testbed/",
           "pwd && ls", "python3 -c", "cat > ", "printf ", "echo ", "cd /testbed && ", '"create"', "aalcr_", "demo_")


def replay_set(n: int = 400) -> list:
    """Sandbox episodes (without bad turns) that together use every command form of MARKERS,
    on synthetic and on sample tasks (AA-LCR documents, the demo rows)."""
    chosen, missing = [], set(MARKERS)
    for e in episodes(n, 11):
        if not e.tools or any(m.get(NO_LOSS) for m in e.messages):
            continue
        text = e.task.id + " ".join(c["function"]["arguments"] for m in e.messages for c in m.get("tool_calls", []))
        text = text.replace('\\"', '"')
        hits = {k for k in missing if k in text}
        if hits:
            chosen.append(e)
            missing -= hits
    assert not missing, missing
    return chosen


def test_simulated_observations_are_what_the_sandbox_prints(base_config):
    """Replaying scripted episodes in a real sandbox gives, call by call, the very observations
    the warm-up trains on (ls order, wc widths, grep | cut, head, editor messages, python output)."""
    from lis.agent.episode import prepare_sandbox
    from lis.agent.tools.dispatch import ToolSettings, execute_tool_call
    from lis.sandbox import make_sandbox

    picked = replay_set()
    replayed = 0
    for e in picked:
        with make_sandbox(base_config).start() as sb:
            prepare_sandbox(sb, e.task, e.mode)
            for i, m in enumerate(e.messages):
                if m["role"] != "assistant" or i + 1 >= len(e.messages):
                    continue
                fn = m["tool_calls"][0]["function"]
                out = execute_tool_call(sb, fn["name"], fn["arguments"], ToolSettings(command_timeout_s=10))
                want = REMAINING.sub("", e.messages[i + 1]["content"])
                assert out.observation == want, (e.domain, json.loads(fn["arguments"]))
                replayed += 1
    assert replayed >= 2 * len(picked)

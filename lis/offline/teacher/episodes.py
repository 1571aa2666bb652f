"""Scripted agent episodes under the real prompts, for the tiny model's tokenizer and warm-up.

An episode starts exactly as the evaluation starts one: ``lis.prompts.render_prompts(task,
mode)`` for a task of :mod:`lis.offline.teacher.tasks` in mode ``sandbox``, ``sandbox_inline`` or ``vanilla``.
Sandbox episodes then follow the agent loop's format turn by turn (``lis.agent.loop``): an
assistant tool call (:mod:`lis.offline.teacher.plans`), the tool message with the observation the
real tool would give (:mod:`lis.offline.teacher.sim_sandbox`), ``Steps Remaining: N`` appended to the newest
message before each turn, and a final ``submit`` once the answer file is written. Some episodes
carry an earlier bad turn (no tool call, then the loop's reminder; or an unparseable call, then
its error) that stays in the context but is not trained on (``NO_LOSS``), so the model learns to
recover. Vanilla episodes are one user message and a short answer in the domain's form.
Same seed → same episodes.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from lis.agent.loop import CONTINUE_MSG
from lis.agent.parsing import INVALID
from lis.agent.tools.schemas import TOOLS
from lis.agent.turn import append_remaining
from lis.prompts import choice_letters, layout, prompt_kind, render_prompts
from lis.offline.teacher import text as st
from lis.offline.teacher.plans import phrase, plan
from lis.offline.teacher.sim_sandbox import SUBMIT, SimSandbox, Step
from lis.offline.teacher.tasks import KINDS, SAMPLE_DOMAINS, sample_tasks, synthetic_task
from lis.records import NO_LOSS
from lis.tasks.schema import Task

MAX_TURNS = (6, 6, 6, 8, 10, 20, 50, 100)      # the agent's max_turns (smoke: 6, the paper: 100)
MAX_PROMPT_CHARS = 12_000  # longer first turns (AA-LCR documents inline: ~400 K chars) are not trained on
KIND_WEIGHTS = {"math": 3, "physics": 3, "chem": 1, "biomed": 3, "long_context": 3, "instruct_follow": 3,
                "instruct_pretrain": 1, "demo": 1}
INLINE_KINDS = ("long_context", "instruct_pretrain")
BAD_TEXTS = ("I will solve this problem step by step.", "Let me look at the problem first.",
             "The answer is in the file.", "<tool_call>\n<tool_call>\n<tool_call>")


@dataclass
class Episode:
    """One conversation to train on: OpenAI-format messages, the tools its prompt offers (None in
    vanilla mode, where the evaluation sends no tools) and the task it was made from."""
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    domain: str
    mode: str
    task: Task


def _call_message(rng: random.Random, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"call_{rng.randrange(16**12):012x}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def _tool_message(call_msg: dict[str, Any], content: str) -> dict[str, Any]:
    call = call_msg["tool_calls"][0]
    return {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": content}


def _bad_turn(rng: random.Random) -> list[dict[str, Any]]:
    """A turn the loop has to correct, as the loop records it (lis.agent.loop): no tool call and the
    reminder, or a ``<tool_call>`` block that is not JSON and its error observation."""
    if rng.random() < 0.5:
        return [{"role": "assistant", "content": rng.choice(BAD_TEXTS[:3]), NO_LOSS: True},
                {"role": "user", "content": CONTINUE_MSG}]
    raw = json.dumps({"text": rng.choice(("<tool_call>\n<tool_call>", '{"name": "execute_bash", "arguments": {"command',
                                          "execute_bash ls"))})
    msg = _call_message(rng, INVALID, json.loads(raw))
    msg[NO_LOSS] = True
    error = (f"Error: your tool call could not be parsed ({raw}). Write it as "
             '<tool_call>{"name": ..., "arguments": {...}}</tool_call> with valid JSON.')
    return [msg, _tool_message(msg, error)]


def task_sandbox(task: Task, mode: str):
    """The layout of ``task`` in ``mode`` and a simulated sandbox holding its folders and, where the
    mode places them, its files: what a plan starts from."""
    lay = layout(task, mode)
    box = SimSandbox()
    box.mkdirs(lay.working_dir, lay.input_dir, lay.output_dir)
    if lay.place_files:
        for name, text in task.input_files.items():
            box.put(f"{lay.input_dir}/{name}", text)
    return lay, box


def planned_turns(task: Task, mode: str, rng: random.Random, planner=None) -> tuple[list[Step | None], int]:
    """The scripted turns of ``task`` in a sandbox mode, ending with ``submit`` (None: a bad turn
    there, one the loop has to correct), and the ``max_turns`` the episode runs under.
    ``planner(task, mode, layout, sim_sandbox, rng)`` makes the tool calls (default: :func:`plan`)."""
    lay, box = task_sandbox(task, mode)
    turns: list[Step | None] = list((planner or plan)(task, mode, lay, box, rng))
    if rng.random() < 0.12:
        turns.insert(rng.randrange(len(turns) + 1), None)  # None: a bad turn here
    turns.append(Step(SUBMIT, {}, ""))
    return turns, rng.choice([m for m in MAX_TURNS if m >= len(turns)])


def sandbox_episode(task: Task, mode: str, rng: random.Random, planner=None) -> Episode:
    """A scripted episode of ``task`` in a sandbox mode (simulated observations), ending with submit."""
    messages = render_prompts(task, mode)
    turns, max_turns = planned_turns(task, mode, rng, planner)
    for k, step in enumerate(turns):
        append_remaining(messages[-1], max_turns - k)
        if step is None:
            messages += _bad_turn(rng)
            continue
        call = _call_message(rng, step.tool, step.args)
        messages.append(call)
        if step.tool != SUBMIT:
            messages.append(_tool_message(call, step.observation))
    return Episode(messages, TOOLS, task.domain, mode, task)


def vanilla_reply(task: Task, rng: random.Random) -> str:
    """A short direct answer in the form the domain asks for (random value, never the ground truth)."""
    kind = prompt_kind(task)
    if kind in ("math", "physics"):
        v = st.boxed_value(rng)
        return rng.choice((f"\\boxed{{{v}}}", f"The answer is \\boxed{{{v}}}.",
                           f"So the final answer is \\boxed{{{v}}}.",
                           f"We compute the value step by step.\n\nThe final answer is \\boxed{{{v}}}."))
    letters = None
    if kind in ("chem", "biomed"):
        letters = choice_letters(task)
    elif kind == "instruct_pretrain" and task.qa_type != "free-form":
        letters = list("ABCD")
    if letters:
        x = rng.choice(letters)
        return rng.choice((x, f"The answer is {x}.", f'"answer": "{x}"', f"Answer: {x}"))
    if kind in INLINE_KINDS:
        return phrase("\n".join(task.input_files.values()), rng)
    if kind == "instruct_follow":
        return st.short_text(rng, st.keywords(task.problem_statement, rng, 2), rng.randint(1, 3))
    return rng.choice((str(rng.randint(0, 999)), rng.choice(st.WORDS)))


def vanilla_episode(task: Task, rng: random.Random) -> Episode:
    messages = render_prompts(task, "vanilla") + [{"role": "assistant", "content": vanilla_reply(task, rng)}]
    return Episode(messages, None, task.domain, "vanilla", task)


def _first_turn_chars(task: Task, mode: str) -> int:
    return sum(len(m["content"]) for m in render_prompts(task, mode))


def draw(rng: random.Random, samples: dict[str, list[Task]]) -> tuple[Task, str]:
    """A task and a mode: a domain by :data:`KIND_WEIGHTS`, a mode, a sample task or a variation."""
    kind = rng.choices(KINDS, [KIND_WEIGHTS[k] for k in KINDS])[0]
    r = rng.random()
    mode = "vanilla" if r < 0.25 else ("sandbox_inline" if r < 0.35 and kind in INLINE_KINDS else "sandbox")
    task = None
    if kind in SAMPLE_DOMAINS and samples.get(kind) and rng.random() < 0.5:
        task = rng.choice(samples[kind])
        if (mode == "sandbox_inline" and not task.input_files) or _first_turn_chars(task, mode) > MAX_PROMPT_CHARS:
            task = None
    if task is None:
        task = synthetic_task(kind, rng, samples)
    return task, mode


def episode(rng: random.Random, samples: dict[str, list[Task]]) -> Episode:
    """One simulated episode of a task and mode from :func:`draw`."""
    task, mode = draw(rng, samples)
    return vanilla_episode(task, rng) if mode == "vanilla" else sandbox_episode(task, mode, rng)


def episodes(n: int, seed: int, samples: dict[str, list[Task]] | None = None) -> list[Episode]:
    """``n`` episodes from a generator seeded with ``seed`` (``samples``: default :func:`sample_tasks`)."""
    samples = sample_tasks() if samples is None else samples
    rng = random.Random(seed)
    return [episode(rng, samples) for _ in range(n)]


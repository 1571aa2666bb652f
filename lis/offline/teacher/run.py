"""Teacher episodes in the real sandbox: the training data of the SFT warm start.

    run_teacher(items, pool, sandbox_config, workers=8)       # lis train teacher (the `teacher` stage)

Every episode runs through the agent's own loop (:func:`lis.agent.episode.run_task`): the real
prompts, tools, observations, "Steps Remaining", reminders and answer file, in a real sandbox
from the pool. The teacher is any ChatModel: for the embedded default the scripted teacher,
whose tool calls come from :mod:`lis.offline.teacher.plans` and
:mod:`lis.offline.teacher.context_plans`. A planned *bad* turn
(no tool call, or an unparseable one) stays in the conversation so that the student learns to
recover, but is not trained on (its index is recorded in ``teacher.no_loss_turns``).

An episode is *successful* — and the SFT stage trains on it — when it ended the way the mode
ends (``submitted`` in the sandbox, ``answered`` vanilla) and its answer has the domain's form;
for a context task (``instruct_pretrain``) also when its reward reaches ``min_reward``.
"""
from __future__ import annotations

import dataclasses
import logging
import random
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable

from lis.agent.episode import run_task
from lis.agent.trajectory import Trajectory
from lis.models.scripted import assistant, tool_call
from lis.prompts import prompt_kind
from lis.rewards import score
from lis.tasks.schema import Task
from lis.offline.agent_check import answer_has_form
from lis.util import cancel

log = logging.getLogger("lis.offline.teacher")

BAD_TEXT = ("I will solve this problem step by step.", "Let me look at the problem first.",
            "The answer is in the file.")
BAD_CALL = ("<tool_call>\n<tool_call>", '<tool_call>\n{"name": "execute_bash", "arguments": {"command\n</tool_call>')


@dataclass
class TeacherItem:
    """One teacher episode to run: a task, a mode, the scripted replies (or None: a model teacher
    answers itself), the turn limit and which assistant turns are not trained on."""
    task: Task
    mode: str
    replies: list[dict[str, Any]] | None
    max_turns: int
    no_loss_turns: list[int] = field(default_factory=list)
    source: str = "benchmark"           # benchmark (form) | context (solved training tasks) | context_vanilla
    #                                     (solved training tasks answered directly, documents in the prompt)


def scripted_item(task: Task, mode: str, rng: random.Random, source: str, planner=None) -> TeacherItem:
    """The scripted teacher's episode of ``task``: planned tool calls as assistant replies."""
    # lazy: loads torch; importing this module does not
    from lis.offline.teacher.episodes import planned_turns, vanilla_reply

    if mode == "vanilla":
        return TeacherItem(task, mode, [assistant(vanilla_reply(task, rng))], 1, [], source)
    turns, max_turns = planned_turns(task, mode, rng, planner)
    replies, bad = [], []
    for k, step in enumerate(turns):
        if step is None:
            bad.append(k)
            replies.append(assistant(rng.choice(BAD_TEXT) if rng.random() < 0.5 else rng.choice(BAD_CALL)))
        else:
            replies.append(assistant(None, tool_call(step.tool, step.args, f"call_{rng.randrange(16**12):012x}")))
    return TeacherItem(task, mode, replies, max_turns, bad, source)


def solved_vanilla_item(task: Task) -> TeacherItem:
    """A training context task answered directly (vanilla mode: the documents in the prompt, no tools):
    the answer in the form its question asks, the ground truth itself (a choice's letters, the
    free-form answer, or ``\\boxed{}`` around it for the math variant), nothing around it: what the
    scorer compares, and what an instruct model's direct answer holds. The SFT start then knows the
    LLM-RL baseline's mode as it knows the sandbox's (the paper starts both RL runs from one instruct
    model that can do both)."""
    answer = task.ground_truth.strip()
    if prompt_kind(task) in ("math", "physics"):  # the math variant's tasks: the form its prompt asks for
        answer = f"\\boxed{{{answer}}}"
    return TeacherItem(task, "vanilla", [assistant(answer)], 1, [], "context_vanilla")


def successful(rec: Trajectory, task: Task, min_reward: float) -> bool:
    ended = rec.termination == ("answered" if rec.mode == "vanilla" else "submitted")
    if not ended or not answer_has_form(task, rec.answer):
        return False
    if task.domain.startswith("instruct_pretrain"):
        return rec.reward is not None and rec.reward >= min_reward
    return True


def run_teacher(items: list[TeacherItem], base_cfg, *, pool=None, model_for: Callable[[TeacherItem], Any],
                min_reward: float = 1.0, workers: int = 8,
                on_done: Callable[[dict[str, Any]], None] | None = None,
                done: dict[int, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Run every item (concurrently, ``workers`` at once) and return the records as dicts, each with
    a ``teacher`` entry (source, no_loss_turns, success, index). ``model_for(item)`` gives the
    ChatModel of an episode (a ScriptedModel with the item's replies, or a shared model teacher).
    ``done`` (index → record, from an interrupted run of the same items) is kept, not run again."""
    def one(i: int, item: TeacherItem) -> dict[str, Any]:
        cancel.check()
        cfg = dataclasses.replace(base_cfg, max_turns=item.max_turns)
        rec = run_task(item.task, model_for(item), item.mode, cfg, pool=pool, seed=i, repeat=0)
        if rec.termination in ("submitted", "answered", "max_turns", "timeout", "token_budget"):
            try:
                s = score(item.task, rec.answer, mode=rec.mode)
                rec.reward, rec.score = s.value, {"scorer": s.scorer, "extracted": s.extracted}
            except Exception as e:  # noqa: BLE001 - a task no scorer knows is a failed teacher episode
                rec.score = {"error": str(e)[:200]}
        d = rec.to_dict()
        d["teacher"] = {"source": item.source, "no_loss_turns": item.no_loss_turns,
                        "success": successful(rec, item.task, min_reward), "index": i}
        return d

    out: list[dict[str, Any] | None] = [None] * len(items)
    for i, d in (done or {}).items():
        if 0 <= i < len(items):
            out[i] = d
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="lis-teacher") as ex:
        pending = {ex.submit(one, i, it): i for i, it in enumerate(items) if out[i] is None}
        try:
            while pending:
                finished, _ = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                for f in finished:
                    i = pending.pop(f)
                    out[i] = f.result()
                    if on_done:
                        on_done(out[i])
        except BaseException:
            cancel.request()
            for f in pending:
                f.cancel()
            raise
    return [d for d in out if d is not None]

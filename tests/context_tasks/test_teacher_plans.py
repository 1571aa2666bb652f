"""The scripted teacher's plans for the context tasks, replayed in the real sandbox.

Each chosen plan runs through the agent's own loop (lis.agent.episode.run_task, a real Docker
sandbox, ScriptedModel replaying the plan's tool calls): the episode submits, its answer file
scores 1.0, and every real observation is the one the plan simulated (the teacher's later
commands use the values those observations showed). The episodes are chosen to cover every
command form the plans use, in every variant and for a seed-collection task.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from lis.agent import AgentConfig, run_task
from lis.agent.tools.dispatch import ToolSettings
from lis.config.tasks import SeedCollection
from lis.context_tasks import build_splits, construct_tasks, load_seed_contexts, settings_from, variants
from lis.models.scripted import ScriptedModel, assistant, tool_call
from lis.rewards import score
from lis.sandbox import make_sandbox
from lis.offline.teacher.context_plans import MAX_STEPS, plan
from lis.offline.teacher.episodes import task_sandbox
from tests.sandbox.conftest import base_config  # noqa: F401  (session fixture: the test image, small limits)

ROOT = Path(__file__).resolve().parents[2]
MARKERS = ("grep -n -i", "/testbed/documents/* |", "cat /testbed/documents/", '"view_range"', "python3 -c",
           "python3 /testbed/", "cd /testbed && python3", "cat > /testbed/", "printf ", "echo ", "ls /testbed/documents",
           '"file_text"', "cat /testbed/answer.txt", "wc -w")


def simulate(task, mode, seed):
    """The plan of ``task`` as the teacher makes it: a simulated sandbox with the task's files."""
    lay, box = task_sandbox(task, mode)
    return plan(task, mode, lay, box, random.Random(seed))


def candidates():
    hard = settings_from({"contexts": 30, "held_out_contexts": 3, "documents_per_context": [1, 4],
                          "distractor_files": [1, 3], "filler_lines": [2, 12], "file_names": "neutral",
                          "compute_share": 0.6, "max_examples": 1})
    easy = settings_from({"contexts": 30, "held_out_contexts": 3, "documents_per_context": [1, 2],
                          "file_names": "entity", "compute_share": 0.3, "answer_position": "start"})
    for s in (hard, easy):
        sets = variants(build_splits(s, ROOT).train, s.seed, 40)
        for t in sets["files"]:
            yield t, "sandbox"
        for t in sets["prompt"][:40]:
            yield t, "sandbox_inline"
        for t in sets["math"]:
            yield t, "sandbox"
    seed_ctx = load_seed_contexts(SeedCollection(path="tests/context_tasks/fixtures/seed_rows.jsonl"), ROOT)
    for t in construct_tasks(seed_ctx, settings_from({"source": "seed"}), "train"):
        yield t, "sandbox"


def pick(limit: int = 10):
    """Few episodes that together use every command form of MARKERS, every variant, a computation,
    a multiple-answer question and a seed-collection task."""
    chosen, missing = [], set(MARKERS) | {"variant:files", "variant:prompt", "variant:math", "seed", "compute",
                                           "multiple"}
    for i, (task, mode) in enumerate(candidates()):
        steps = simulate(task, mode, i)
        text = " ".join(json.dumps(s.args) for s in steps).replace('\\"', '"')
        tags = {m for m in MARKERS if m in text}
        tags.add(f"variant:{task.meta['variant']}")
        if task.meta.get("source", "").startswith("seed"):
            tags.add("seed")
        if (task.meta.get("needs") or {}).get("expr") and task.domain != "math":
            tags.add("compute")
        if "," in task.ground_truth and task.qa_type == "multiple choice":
            tags.add("multiple")
        if tags & missing:
            chosen.append((task, mode, i, steps))
            missing -= tags
        if not missing:
            break
    assert not missing, missing
    assert len(chosen) <= limit, len(chosen)
    return chosen


def test_plans_are_short_and_end_with_the_answer():
    for i, (task, mode) in enumerate(candidates()):
        steps = simulate(task, mode, i)
        assert 1 <= len(steps) <= MAX_STEPS
        assert any("/testbed/answer.txt" in json.dumps(s.args) for s in steps)


@pytest.mark.docker
def test_plans_replayed_in_the_real_sandbox_score_one(base_config):  # noqa: F811
    cfg = AgentConfig(max_turns=MAX_STEPS + 1, tools=ToolSettings(command_timeout_s=10))
    for task, mode, i, steps in pick():
        replies = [assistant(None, tool_call(s.tool, s.args, f"call_{k}")) for k, s in enumerate(steps)]
        replies.append(assistant(None, tool_call("submit", {}, "call_submit")))
        with make_sandbox(base_config).start() as sb:
            rec = run_task(task, ScriptedModel(replies, name="teacher"), mode, cfg, sandbox=sb, seed=i)
        assert rec.termination == "submitted", (task.id, rec.termination, rec.error)
        for k, step in enumerate(steps):
            real = rec.steps[k].calls[0].observation
            assert real == step.observation, (task.id, mode, step.args, real)
        s = score(task, rec.answer, mode=mode)
        assert s.value == 1.0, (task.id, task.ground_truth, rec.answer, s)


def test_vanilla_context_episodes_answer_directly_and_score_one():
    """``teacher.vanilla_context_episodes``: training context tasks answered with no tools, the documents
    in the prompt (the LLM-RL baseline's mode): every question type scores 1.0 and counts as successful
    SFT data, with the documents in the prompt the student sees."""
    from lis.agent import AgentConfig
    from lis.offline.teacher.run import run_teacher
    from lis.offline.teacher.items import teacher_items

    tasks = [t for t, mode in candidates() if mode == "sandbox"][:120]
    sec = {"seed": 3, "benchmark_episodes": 0, "context_episodes": 0, "vanilla_context_episodes": 40}
    items = teacher_items(sec, tasks)
    assert len(items) == 40 and {it.mode for it in items} == {"vanilla"}
    assert {it.source for it in items} == {"context_vanilla"}
    assert {it.task.qa_type for it in items} == {"free-form", "multiple choice"}
    records = run_teacher(items, AgentConfig(), model_for=lambda it: ScriptedModel(it.replies, name="teacher"),
                          workers=4)
    assert all(r["teacher"]["success"] and r["reward"] == 1.0 for r in records), [
        (r["task_id"], r["answer"], r["reward"]) for r in records if not r["teacher"]["success"]]
    first = records[0]
    assert first["mode"] == "vanilla" and first["termination"] == "answered"
    task = next(t for t in tasks if t.id == first["task_id"])
    assert next(iter(task.input_files.values()))[:200] in first["messages"][0]["content"]

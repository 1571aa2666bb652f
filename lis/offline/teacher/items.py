"""Which episodes the teacher runs (the ``teacher`` stage's items: lis/stages/teacher.py; the test suite's
tiny agent: lis/train/tiny_agent.py)."""
from __future__ import annotations

import random
from typing import Any

from lis.context_tasks import episode_mode
from lis.offline.teacher.context_plans import plan as context_plan
from lis.offline.teacher.run import scripted_item, solved_vanilla_item
from lis.offline.teacher.tasks import sample_tasks


def teacher_items(sec: dict[str, Any], context_tasks: list) -> list:
    """The scripted teacher's episodes: ``benchmark_episodes`` drawn over every domain and mode (the
    form of an episode), then ``context_episodes`` of the training context tasks (solved, in the mode
    their variant runs in), then ``vanilla_context_episodes`` of them answered directly (the documents
    in the prompt, no tools: the LLM-RL baseline's mode; drawn apart from the others)."""
    # lazy: loads torch; importing this module does not
    from lis.offline.teacher.episodes import draw

    rng = random.Random(int(sec["seed"]))
    samples = sample_tasks()
    items = []
    for _ in range(int(sec["benchmark_episodes"])):
        task, mode = draw(rng, samples)
        items.append(scripted_item(task, mode, rng, "benchmark"))
    if context_tasks and int(sec["context_episodes"]):
        chosen = [context_tasks[i % len(context_tasks)] for i in rng.sample(range(len(context_tasks)),
                                                                            min(len(context_tasks),
                                                                                int(sec["context_episodes"])))]
        items += [scripted_item(t, episode_mode(t), rng, "context", planner=context_plan) for t in chosen]
    n_vanilla = int(sec.get("vanilla_context_episodes") or 0)
    if context_tasks and n_vanilla:
        picks = rng.sample(range(len(context_tasks)), min(len(context_tasks), n_vanilla))
        items += [solved_vanilla_item(context_tasks[i]) for i in picks]
    return items

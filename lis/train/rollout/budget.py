"""Training prompts against the prompt budget, before any episode runs.

    kept, dropped = within_prompt_budget(tasks, tokenizer, "vanilla", agent_cfg, max_prompt_tokens=16384)

A task's prompt is its first model call as rendered in the run's mode by the policy's chat template
(with the tools' schemas in sandbox modes). A task over the budget is dropped up front and counted
(``prompts_dropped``), as the authors' ``filter_overlong_prompts`` does: otherwise vanilla mode's long
documents would end as errors mid-run and silently shrink the baseline's task set.
"""
from __future__ import annotations

from typing import Any

from lis.agent.loop import first_call_messages
from lis.agent.tools.schemas import TOOLS
from lis.models.local_hf import render_ids
from lis.prompts import render_prompts
from lis.tasks.schema import Task
from lis.train.rollout.group import task_mode


def first_prompt_ids(task: Task, tokenizer: Any, mode: str, agent_cfg) -> list[int]:
    """The ids of ``task``'s first model call in ``mode`` (the episode's prompt)."""
    episode_mode = task_mode(task, mode)
    messages = render_prompts(task, episode_mode)
    if episode_mode == "vanilla":
        return render_ids(tokenizer, messages, None)
    return render_ids(tokenizer, first_call_messages(messages, agent_cfg), TOOLS)


def within_prompt_budget(tasks: list[Task], tokenizer: Any, mode: str, agent_cfg,
                         max_prompt_tokens: int) -> tuple[list[Task], list[dict[str, Any]]]:
    """(the tasks whose prompt fits, one record per dropped task: id and prompt tokens)."""
    kept, dropped = [], []
    for t in tasks:
        n = len(first_prompt_ids(t, tokenizer, mode, agent_cfg))
        if n > max_prompt_tokens:
            dropped.append({"id": t.id, "prompt_tokens": n})
        else:
            kept.append(t)
    return kept, dropped

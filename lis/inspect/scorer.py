"""lis's scorers as an Inspect scorer, and the accuracy interval lis's reports use.

    Task(..., scorer=lis_scorer(mode="sandbox"))
    inspect eval lis/physics --model openai/gpt-4o --model-role judge=openai/gpt-4o-mini

:func:`lis_scorer` is :func:`lis.rewards.score` on the episode's answer: the answer file in the
sandbox modes, the reply in vanilla mode (a sample cut short by a limit is scored on the answer
file as the sandbox holds it, or on the last output). Graders run on the host, off the event loop.
The LLM judge is the model of Inspect's ``judge`` role, asked as ``lis eval`` asks it; without one
the rule-based fallbacks score. :func:`ci95` is metrics.json's bootstrap over items (docs/inspect.md).
"""
from __future__ import annotations

from typing import Any

import anyio.to_thread
from inspect_ai.model import model_roles
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, accuracy, metric, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import sandbox as current_sandbox

from lis.config.agent import Judge as JudgeSettings
from lis.inspect.dataset import task_for
from lis.inspect.model_bridge import InspectChatModel
from lis.inspect.settings import load_params
from lis.inspect.solver import STORE_KEY
from lis.prompts import layout
from lis.rewards import Judge, score as lis_score
from lis.util.stats import accuracy_ci

JUDGE_ROLE = "judge"


@metric
def ci95() -> Metric:
    """95% bootstrap interval of the accuracy over items (``ci95_low``, ``ci95_high``): lis's metrics.json ci95."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        ci = accuracy_ci([s.score.as_float() for s in scores])
        return {} if ci is None else {"ci95_low": ci[0], "ci95_high": ci[1]}

    return compute


def judge_model(conf: JudgeSettings | None) -> Judge | None:
    """The LLM judge: Inspect's ``judge`` role model with the params' ``scoring.judge`` settings (null there:
    the section model's defaults); None without the role."""
    bound = model_roles().get(JUDGE_ROLE)
    if isinstance(bound, list):
        bound = bound[0] if bound else None
    if bound is None:
        return None

    def knob(name: str) -> Any:
        return getattr(conf, name) if conf is not None else JudgeSettings.model_fields[name].default

    return Judge(InspectChatModel(bound), repeats=knob("repeats"), temperature=float(knob("temperature")),
                 max_tokens=knob("max_tokens"))


async def _answer(state: TaskState, task, mode: str) -> str:
    kept = state.store.get(STORE_KEY)
    if isinstance(kept, dict) and "answer" in kept:
        return kept["answer"] or ""
    if mode == "vanilla":
        return (state.output.completion or "").strip() if state.output else ""
    try:  # the solver was cut short: the answer file as the sandbox holds it
        return (await current_sandbox().read_file(layout(task, mode).answer_path)).strip()
    except Exception:  # noqa: BLE001 - no file, a gone sandbox: no answer
        return ""


@scorer(metrics=[accuracy(), stderr(), ci95()])
def lis_scorer(mode: str = "sandbox", profile: str | None = None, params: str | None = None,
               ifbench_variant: str | None = None) -> Scorer:
    """lis's scorer of the sample's domain (see the module doc). ``ifbench_variant``: ifbench8 | lis5
    (default: the profile's ``scoring.ifbench_variants``)."""
    p = load_params(params, profile)
    sec = p.settings("scoring")
    variant = ifbench_variant or sec.ifbench_variants
    judge_settings = sec.judge

    async def score(state: TaskState, target: Target) -> Score:
        task = task_for(state.metadata)
        answer = await _answer(state, task, mode)
        judge = judge_model(judge_settings)

        def grade():
            return lis_score(task, answer, judge=judge, mode=mode, ifbench_variant=variant)

        s = await anyio.to_thread.run_sync(grade)
        shown = s.extracted if s.extracted is not None else answer
        return Score(value=s.value, answer=shown,
                     explanation=f"{s.scorer}: {shown!r} against {task.ground_truth[:300]!r}",
                     metadata={"scorer": s.scorer, "details": s.details})

    return score

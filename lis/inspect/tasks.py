"""The paper's experiment as Inspect tasks: one per domain, in sandbox or vanilla mode, for any model
Inspect can call.

    inspect eval lis/math --model anthropic/claude-sonnet-4-5 -T mode=sandbox -T profile=full
    inspect eval lis/long_context -T mode=sandbox_inline --model ollama/qwen3:4b
    inspect eval lis/physics --model openai/gpt-4o --model-role judge=openai/gpt-4o-mini

One task per domain of Table 2, plus ``lis/held_out_context`` (the learning check's held-out set),
each taking the parameters of :func:`lis_task`; registered through the ``inspect_ai`` entry point
(``lis.inspect._registry``). Building a task reads data; importing this module reads nothing.
"""
from __future__ import annotations

from inspect_ai import Epochs, Task, task
from inspect_ai.util import SandboxEnvironmentSpec

from lis.errors import LisError
from lis.inspect.config import LisSandboxConfig
from lis.prompts import MODES

# task name → lis domain
DOMAINS = {"math": "math", "physics": "physics", "chemistry": "chem", "biomed": "biomed",
           "long_context": "long_context", "instruct_follow": "instruct_follow",
           "held_out_context": "instruct_pretrain"}
INLINE_DOMAINS = ("long_context", "instruct_pretrain")


def lis_task(name: str, *, mode: str = "sandbox", source: str | None = None, tasks_file: str | None = None,
             limit: int | None = None, seed: int | None = None, profile: str | None = None,
             params: str | None = None, max_turns: int | None = None, max_context_tokens: int | None = None,
             episode_timeout_s: float | None = None) -> Task:
    """The Inspect task of the lis task set ``name`` (a key of :data:`DOMAINS`).

    Args:
      mode: sandbox (documents as files, the paper's agent) | vanilla (one direct answer, no
        sandbox) | sandbox_inline (documents in the prompt; long_context, held_out_context).
      source: samples (data/samples, offline) | hub (the paper's rows on the HF hub) | generated
        (held_out_context). Default: the profile's ``tasks.domains.<d>.source``.
      tasks_file: a task JSONL written by ``lis tasks``; wins over ``source``.
      limit, seed: a seeded draw of ``limit`` tasks in the set's order (default: the profile's).
      profile: the params profile (default: params.yaml's own) for the task set, the agent's budgets,
        the sandbox, the scorer settings and the repeats (``eval.repeats``: the epochs).
      params: the params.yaml to read (default: the lis checkout's).
      max_turns, max_context_tokens, episode_timeout_s: the episode's budgets (default: the profile's
        ``agent`` section)."""
    from inspect_ai._util.error import PrerequisiteError  # Inspect prints it as one line, no traceback

    try:
        return _build(name, mode=mode, source=source, tasks_file=tasks_file, limit=limit, seed=seed,
                      profile=profile, params=params, max_turns=max_turns, max_context_tokens=max_context_tokens,
                      episode_timeout_s=episode_timeout_s)
    except LisError as e:  # the loaders' hints name `lis tasks` flags: say them as task parameters
        hint = e.one_line().replace("--source ", "-T source=").replace("--limit", "-T limit=")
        raise PrerequisiteError(f"error: lis/{name}: {hint}") from None


def _build(name: str, *, mode: str, source, tasks_file, limit, seed, profile, params, max_turns,
           max_context_tokens, episode_timeout_s) -> Task:
    # lazy: task loaders (lis.context_tasks); Inspect imports this module on every provider lookup
    from lis.inspect.dataset import load_task_set, task_dataset
    # lazy: the scorers (lis.rewards, numpy); Inspect imports this module on every provider lookup
    from lis.inspect.scorer import lis_scorer
    # lazy: lis's agent settings; Inspect imports this module on every provider lookup
    from lis.inspect.settings import load_params
    # lazy: lis's agent; Inspect imports this module on every provider lookup
    from lis.inspect.solver import lis_agent

    domain = DOMAINS[name]
    _check_numbers(limit=limit, seed=seed, max_turns=max_turns, max_context_tokens=max_context_tokens,
                   episode_timeout_s=episode_timeout_s)
    if mode not in MODES:
        raise LisError(f"unknown mode {mode!r}", f"use -T mode= one of {', '.join(MODES)}")
    if mode == "sandbox_inline" and domain not in INLINE_DOMAINS:
        raise LisError(f"mode sandbox_inline puts documents in the prompt; {name} has none",
                       "use it with lis/long_context or lis/held_out_context")
    p = load_params(params, profile)
    tasks = load_task_set(p, domain, source=source, tasks_file=tasks_file, limit=limit, seed=seed)
    if not tasks:
        raise LisError(f"the {name} task set is empty", "check -T source / -T tasks_file / -T limit")
    repeats = p.settings("eval").repeats.get(domain, 1)
    sandbox = None
    if mode != "vanilla":
        sandbox = SandboxEnvironmentSpec("lis", LisSandboxConfig(params=params, profile=profile))
    return Task(dataset=task_dataset(tasks, mode, name=f"lis/{name}", location=tasks_file),
                solver=lis_agent(mode=mode, profile=profile, params=params, max_turns=max_turns,
                                 max_context_tokens=max_context_tokens, episode_timeout_s=episode_timeout_s),
                scorer=lis_scorer(mode=mode, profile=profile, params=params),
                sandbox=sandbox, epochs=Epochs(repeats, "mean"),
                metadata={"lis_domain": domain, "mode": mode, "profile": p.profile, "tasks": len(tasks)})


# task parameter → (smallest value, whole numbers only)
NUMBERS = {"limit": (1, True), "seed": (0, True), "max_turns": (1, True), "max_context_tokens": (1, True),
           "episode_timeout_s": (0, False)}


def _check_numbers(**given) -> None:
    """Each numeric task parameter given (``-T name=value``) a number in its range, or a one-line LisError
    naming it (Inspect hands ``-T`` values over as YAML reads them: ``seed=xyz`` is a string)."""
    for key, value in given.items():
        if value is None:
            continue
        low, whole = NUMBERS[key]
        ok = not isinstance(value, bool) and isinstance(value, int if whole else (int, float))
        if ok and (value > low if key == "episode_timeout_s" else value >= low) and value == value:
            continue
        kind = "a whole number" if whole else "a number of seconds"
        rng = f"above {low}" if key == "episode_timeout_s" else f"of {low} or more"
        raise LisError(f"-T {key}={value!r} is not {kind} {rng}", f"give -T {key}= {kind} {rng}, or leave it out "
                       "for the profile's")


def _define(name: str, doc: str):
    """The registered Inspect task ``lis/<name>`` (its parameters: :func:`lis_task`'s)."""

    def lis_task_fn(mode: str = "sandbox", source: str | None = None, tasks_file: str | None = None,
                    limit: int | None = None, seed: int | None = None, profile: str | None = None,
                    params: str | None = None, max_turns: int | None = None, max_context_tokens: int | None = None,
                    episode_timeout_s: float | None = None) -> Task:
        return lis_task(name, mode=mode, source=source, tasks_file=tasks_file, limit=limit, seed=seed,
                        profile=profile, params=params, max_turns=max_turns, max_context_tokens=max_context_tokens,
                        episode_timeout_s=episode_timeout_s)

    lis_task_fn.__name__ = lis_task_fn.__qualname__ = name  # Inspect registers the task by this name
    lis_task_fn.__doc__ = doc
    return task(lis_task_fn)


math = _define("math", "AIME 2025 (math), scored by math-verify on the last \\boxed{}.")
physics = _define("physics", "UGPhysics (physics), scored by the judge role when bound, else math-verify part by part.")
chemistry = _define("chemistry", "ChemBench4K (chemistry), scored by the choice letter. No offline sample exists: "
                                 "source=hub or tasks_file.")
biomed = _define("biomed", "MedXpertQA (biomedicine), scored by the choice letter.")
long_context = _define("long_context", "AA-LCR (long context): documents as files (sandbox), in the prompt (vanilla, "
                                       "sandbox_inline).")
instruct_follow = _define("instruct_follow", "IFBench (instruction following), scored by IFBench's loose prompt-level "
                                             "accuracy.")
held_out_context = _define("held_out_context", "The held-out context tasks (the RL learning check's set): contexts "
                                               "disjoint from training.")

"""How an agent model behaves in the real loop with real sandboxes, on the offline sample tasks.

    lis train check data/models/sft             # a model folder, the params' sandbox, 2 tasks per domain
    check_agent(model, sandbox_config, per_domain=2, max_turns=6)

For each domain it runs sandbox episodes (``lis.agent.run_task``: the real prompts, tools,
observations and answer file) and vanilla turns, and reports behaviour, not accuracy
(:func:`summarize_sandbox`): valid tool calls, episodes that submit, answer files, answers of the
domain's form (:func:`answer_has_form`), turns, bash exit codes, the commands run most often.
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from typing import Any

from lis.agent.episode import run_task
from lis.agent.loop import AgentConfig
from lis.agent.tools.schemas import TOOLS
from lis.models.base import Sampling
from lis.models.toolcalls import check_tool_call
from lis.prompts import choice_letters, prompt_kind
from lis.rewards.choice import extract_choice
from lis.sandbox.factory import make_sandbox
from lis.tasks import load_samples

CHECK_DOMAINS = ("math", "physics", "biomed", "long_context", "instruct_follow")
_BOXED = re.compile(r"\\boxed\{.+\}", re.S)


def answer_has_form(task: Any, answer: str) -> bool:
    """Whether ``answer`` has the form ``task``'s domain asks for (its content is not judged)."""
    kind = prompt_kind(task)
    if kind in ("math", "physics"):
        return bool(_BOXED.search(answer))
    if kind in ("chem", "biomed"):
        return extract_choice(answer, "".join(choice_letters(task))) is not None
    return bool(answer.strip())


def valid_turn(step: Any) -> bool:
    """A turn with at least one tool call, each a valid call of the agent's tools."""
    if not step.calls:
        return False
    for c in step.calls:
        if c.tool is None or c.arguments is None:
            return False
        call = {"function": {"name": c.tool, "arguments": json.dumps(c.arguments)}}
        if check_tool_call(call, TOOLS) is not None:
            return False
    return True


def _rate(n: int, d: int) -> float | None:
    return round(n / d, 3) if d else None


def summarize_sandbox(records: list[Any], tasks: dict[str, Any]) -> dict[str, Any]:
    """Behaviour of sandbox episodes (Trajectory records)."""
    steps = [s for r in records for s in r.steps]
    bash = [c for s in steps for c in s.calls if c.tool == "execute_bash" and c.arguments]
    commands = Counter(" ".join(str(c.arguments.get("command", "")).split())[:60] for c in bash)
    return {
        "episodes": len(records), "turns": len(steps),
        "mean_turns": round(len(steps) / len(records), 2) if records else None,
        "valid_call_rate": _rate(sum(valid_turn(s) for s in steps), len(steps)),
        "submitted": _rate(sum(r.termination == "submitted" for r in records), len(records)),
        "answer_file": _rate(sum(bool(r.answer) for r in records), len(records)),
        "answer_form": _rate(sum(answer_has_form(tasks[r.task_id], r.answer) for r in records), len(records)),
        "bash_exit_0": _rate(sum(c.exit_code == 0 for c in bash), len(bash)),
        "tools": dict(Counter(c.tool or "invalid" for s in steps for c in s.calls).most_common()),
        "terminations": dict(Counter(r.termination for r in records).most_common()),
        "commands": [f"{n}x {cmd}" for cmd, n in commands.most_common(5)],
        "answers": [r.answer[:60] for r in records],
    }


def summarize_vanilla(records: list[Any], tasks: dict[str, Any]) -> dict[str, Any]:
    """Behaviour of vanilla answers: how many have the domain's form; a few examples."""
    return {"episodes": len(records),
            "answer_form": _rate(sum(answer_has_form(tasks[r.task_id], r.answer) for r in records), len(records)),
            "terminations": dict(Counter(r.termination for r in records).most_common()),
            "answers": [r.answer[:60] for r in records]}


def check_agent(model: Any, sandbox_config: Any, per_domain: int = 2, max_turns: int = 6, sampling: Any = None,
                seed: int = 0) -> dict[str, Any]:
    """Run the first ``per_domain`` sample tasks of each domain in sandbox and vanilla mode and
    summarise the behaviour (see the module docstring). Episode ``i`` samples with seed
    ``seed + i``; each sandbox episode gets a fresh sandbox of ``sandbox_config``.

    Raises LisError when a domain has no offline sample; sandbox failures end an episode with
    termination ``sandbox_error`` (counted, not raised).
    """
    cfg = AgentConfig(max_turns=max_turns, episode_timeout_s=300.0, sampling=sampling or Sampling())
    out: dict[str, Any] = {"settings": {"per_domain": per_domain, "max_turns": max_turns, "seed": seed,
                                        "sampling": {k: v for k, v in cfg.sampling.__dict__.items()
                                                     if v not in (None, {})}},
                           "sandbox": {}, "vanilla": {}}
    k = 0
    for domain in CHECK_DOMAINS:
        tasks = load_samples(domain)[:per_domain]
        by_id = {t.id: t for t in tasks}
        boxed, plain = [], []
        for t in tasks:
            ep = dataclasses.replace(cfg, sampling=dataclasses.replace(cfg.sampling, seed=seed + k))
            k += 1
            with make_sandbox(sandbox_config).start() as sb:
                boxed.append(run_task(t, model, "sandbox", ep, sandbox=sb))
            plain.append(run_task(t, model, "vanilla", ep))
        out["sandbox"][domain] = summarize_sandbox(boxed, by_id)
        out["vanilla"][domain] = summarize_vanilla(plain, by_id)
    out["overall"] = _overall(out["sandbox"])
    return out


def _overall(per_domain: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Turn- and episode-weighted means over the domains."""
    eps = sum(d["episodes"] for d in per_domain.values())
    turns = sum(d["turns"] for d in per_domain.values())

    def mean(key: str, weight: str) -> float | None:
        total = sum((d[key] or 0) * d[weight] for d in per_domain.values() if d[key] is not None)
        return round(total / sum(d[weight] for d in per_domain.values()), 3) if eps else None

    return {"episodes": eps, "turns": turns, "mean_turns": round(turns / eps, 2) if eps else None,
            "valid_call_rate": mean("valid_call_rate", "turns"), "submitted": mean("submitted", "episodes"),
            "answer_file": mean("answer_file", "episodes"), "answer_form": mean("answer_form", "episodes")}

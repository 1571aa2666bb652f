"""One entry point for every domain: ``score(task_or_domain, response, ...) -> Score``.

Routing (domain prefixes as in the official reward, so ``physics_mini`` is physics):

==================  ===========================================================================
math                math-verify on the last ``\\boxed{}``
physics             the LLM judge when one is given, else math-verify part by part
chem, biomed        strict choice letter (set F1 for a comma-separated gold)
long_context        the LLM judge when one is given, else normalised exact match, else ROUGE-L
instruct_follow     IFBench prompt-level loose accuracy (strict in details); needs the prompt;
                    ``ifbench_variant`` "ifbench8" (the reference loose score, default) or "lis5"
                    (the official LLM-in-Sandbox reward's 5 response variants)
instruct_pretrain   by qa_type: "multiple choice" + comma in gold → set F1; "multiple choice" →
                    letter; anything else → math-verify (1.0 if it matches) else ROUGE-L F
demo                case-insensitive exact match
==================  ===========================================================================

An empty response or gold scores 0 without calling anything. Reasoning up to ``</think>`` is
dropped first. ``mode`` ("sandbox": the answer file; "vanilla": the whole reply) is recorded.
"""
from __future__ import annotations

import re
import string
from typing import Any

from lis.errors import LisError
from lis.models.base import ChatModel
from lis.rewards.base import Score
from lis.rewards.choice import letters_from_options, score_choice
from lis.rewards.extract import strip_thinking
from lis.rewards.ifbench import score_ifbench
from lis.rewards.ifbench.evaluate import VARIANTS
from lis.rewards.judge import Judge
from lis.rewards.math import score_math
from lis.rewards.physics import score_physics_rule
from lis.rewards.text import rouge_l, score_text
from lis.tasks.schema import Task

DOMAINS = ("math", "physics", "chem", "biomed", "long_context", "instruct_follow", "instruct_pretrain", "demo")
_DEFAULT_LETTERS = {"chem": "ABCD", "biomed": "ABCDEFGHIJ"}
_SCORER_NAMES = {"math": "math_verify", "physics": "math_verify", "chem": "choice", "biomed": "choice",
                 "long_context": "rouge_l", "instruct_follow": "ifbench_loose", "instruct_pretrain": "rouge_l",
                 "demo": "exact_match"}


def base_domain(domain: str) -> str:
    """The routing domain of a domain name ("physics_mini" → "physics"). Raises LisError if unknown."""
    for name in DOMAINS:
        if domain == name or domain.startswith(name):
            return name
    raise LisError(f"no scorer for domain {domain!r}", f"known domains: {', '.join(DOMAINS)}")


def option_letters(problem: str | None, meta: dict[str, Any] | None, domain: str) -> str:
    """Valid letters: ``meta['choices']`` (the task loaders' list of letters), else the keys of
    ``meta['options']``, else the option labels in the problem, else the domain's default."""
    choices = (meta or {}).get("choices")
    if isinstance(choices, (list, tuple, str)) and choices:
        return letters_from_options("".join(str(c) for c in choices))
    options = (meta or {}).get("options")
    if isinstance(options, dict):
        return letters_from_options("".join(str(k) for k in options))
    if isinstance(options, list) and options:
        letters = "".join(str(o.get("letter", "")) if isinstance(o, dict) else "" for o in options)
        return letters_from_options(letters or len(options))
    labels = set(re.findall(r"\(([A-Z])\)\s", problem or "")) | set(re.findall(r"(?m)^\s*([A-Z])[.)]\s", problem or ""))
    if {"A", "B"} <= labels:
        return string.ascii_uppercase[:string.ascii_uppercase.index(max(labels)) + 1]
    return _DEFAULT_LETTERS.get(domain, "ABCD")


def _as_judge(judge: Judge | ChatModel | None) -> Judge | None:
    if judge is None or isinstance(judge, Judge):
        return judge
    return Judge(judge)


_MATH_WORDS = frozenset("sin cos tan cot sec csc log ln exp sqrt pi inf lim max min mod gcd lcm det frac dfrac".split())


def looks_mathematical(gold: str) -> bool:
    """False for prose golds: a word of 3+ letters outside LaTeX commands and math function names.

    math-verify reads prose as a product of one-letter symbols, so "Paris is the capital" would
    equal "The capital is Paris"; the official free-form reward has that defect, we skip
    math-verify for such golds and go straight to ROUGE-L.
    """
    text = re.sub(r"\\text\w*\s*\{[^{}]*\}|\\[A-Za-z]+", " ", gold)
    return not any(w.lower() not in _MATH_WORDS for w in re.findall(r"[A-Za-z]{3,}", text))


def _free_form(response: str, gold: str) -> Score:
    checked = looks_mathematical(gold)
    math = score_math(response, gold) if checked else None
    if math is not None and math.value > 0:
        return Score(1.0, "math_verify", math.extracted, math.details)
    value = rouge_l(response, gold)
    return Score(value, "rouge_l", response.strip(),
                 {"rouge_l_f": value, "math_verify": math.details if math else "skipped: gold is prose"})


def score(task_or_domain: Task | str, response: str | None, ground_truth: str | None = None, *,
          judge: Judge | ChatModel | None = None, mode: str = "sandbox", prompt: str | None = None,
          qa_type: str | None = None, valid_letters: str | None = None, ifbench_variant: str = "ifbench8") -> Score:
    """Score ``response`` for a task (or a domain name with ``ground_truth``; ``prompt`` for IFBench/judge).

    ``ifbench_variant`` (params ``scoring.ifbench_variants``) picks the loose IFBench score:
    "ifbench8" (the reference's 8 response variants) or "lis5" (the official LIS reward's 5).
    Raises LisError for an unknown domain, IFBench variant or a malformed IFBench ground truth,
    and ModelError when a configured judge cannot be reached; everything about the *answer*
    (unparsable, wrong, timed out) is a score of 0 with the reason in details.
    """
    if ifbench_variant not in VARIANTS:
        raise LisError(f"unknown IFBench variant {ifbench_variant!r}", f"use one of: {', '.join(VARIANTS)}")
    task = task_or_domain if isinstance(task_or_domain, Task) else None
    domain = base_domain(task.domain if task else str(task_or_domain))
    gold = ground_truth if ground_truth is not None else (task.ground_truth if task else None)
    prompt = prompt if prompt is not None else (task.problem_statement if task else None)
    qa_type = qa_type if qa_type is not None else (task.qa_type if task else None)
    answer = strip_thinking(response or "").strip()
    if not answer or not (gold or "").strip():
        result = Score(0.0, _SCORER_NAMES[domain], None, {"error": "empty response" if not answer else "empty gold"})
    else:
        result = _route(domain, answer, gold or "", prompt, qa_type, _as_judge(judge),
                        valid_letters or option_letters(prompt, task.meta if task else None, domain), ifbench_variant)
    result.details.setdefault("domain", domain)
    result.details.setdefault("mode", mode)
    return result


def _route(domain: str, answer: str, gold: str, prompt: str | None, qa_type: str | None,
           judge: Judge | None, letters: str, ifbench_variant: str) -> Score:
    if domain == "math":
        return score_math(answer, gold)
    if domain == "physics":
        return judge.score(prompt or "", gold, answer) if judge else score_physics_rule(answer, gold)
    if domain in ("chem", "biomed"):
        return score_choice(answer, gold, letters)
    if domain == "long_context":
        return judge.score(prompt or "", gold, answer) if judge else score_text(answer, gold)
    if domain == "instruct_follow":
        return score_ifbench(answer, gold, prompt, variants=ifbench_variant)
    if domain == "demo":
        equal = answer.lower() == gold.strip().lower()
        return Score(1.0 if equal else 0.0, "exact_match", answer, {})
    kind = (qa_type or "").lower()
    if "multiple choice" in kind:
        return score_choice(answer, gold, letters if "," not in gold else string.ascii_uppercase)
    return _free_form(answer, gold)

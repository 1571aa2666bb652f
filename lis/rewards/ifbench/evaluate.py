"""Prompt-level IFBench scoring: strict and loose accuracy of one response.

Strict: every instruction holds on the response as given. Loose (IFBench/IFEval's
``test_instruction_following_loose``): every instruction holds on at least one of 8 variants —
the response, with '*' removed, with its first line dropped, its last line dropped, both dropped,
and each of those three with '*' removed. The official LLM-in-Sandbox reward uses only 5 of them
(no '*'-removal combined with line dropping); ``variants="lis5"`` reproduces that. A variant that
is empty after stripping never passes, as in the reference.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from lis.errors import LisError
from lis.rewards.base import Score
from lis.rewards.ifbench.registry import IFBenchError, build_check

Variants = Literal["ifbench8", "lis5"]
VARIANTS = ("ifbench8", "lis5")


def response_variants(response: str, variants: Variants = "ifbench8") -> list[str]:
    """The texts the loose score tries, in the reference's order."""
    lines = response.split("\n")
    drop_first = "\n".join(lines[1:]).strip()
    drop_last = "\n".join(lines[:-1]).strip()
    drop_both = "\n".join(lines[1:-1]).strip()
    no_star = response.replace("*", "")
    if variants == "lis5":
        return [response, no_star, drop_first, drop_last, drop_both]
    return [response, no_star, drop_first, drop_last, drop_both,
            drop_first.replace("*", ""), drop_last.replace("*", ""), drop_both.replace("*", "")]


@dataclass
class IFBenchResult:
    strict: list[bool]
    loose: list[bool]
    errors: dict[str, str] = field(default_factory=dict)   # instruction id → exception raised by its check

    @property
    def strict_all(self) -> bool:
        return bool(self.strict) and all(self.strict)

    @property
    def loose_all(self) -> bool:
        return bool(self.loose) and all(self.loose)


def parse_ground_truth(ground_truth: str | dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """``(instruction_id_list, kwargs)`` from the JSON ground truth (or its dict).

    Raises :class:`IFBenchError` when it is not JSON, lacks the two lists, or their lengths differ.
    """
    try:
        data = json.loads(ground_truth) if isinstance(ground_truth, str) else dict(ground_truth)
        ids = list(data["instruction_id_list"])
        kwargs = [dict(k or {}) for k in data.get("kwargs") or [{} for _ in ids]]
    except (ValueError, KeyError, TypeError) as e:
        raise IFBenchError(f"IFBench ground truth is not {{instruction_id_list, kwargs}} JSON: {e}",
                           "pass the task's ground_truth string unchanged") from e
    if len(kwargs) != len(ids):
        raise IFBenchError(f"IFBench ground truth has {len(ids)} ids but {len(kwargs)} kwargs",
                           "the two lists must have the same length")
    return ids, kwargs


def _holds(check, text: str, iid: str, errors: dict[str, str]) -> bool:
    if not text.strip():
        return False
    try:
        return check(text)
    except LisError:
        raise
    except Exception as e:  # a reference check would crash here; we count it as not followed
        errors.setdefault(iid, f"{type(e).__name__}: {e}")
        return False


def evaluate(response: str, ground_truth: str | dict[str, Any], prompt: str | None = None,
             variants: Variants = "ifbench8") -> IFBenchResult:
    """Strict and loose verdicts per instruction.

    Raises :class:`IFBenchError` (a LisError) for a malformed ground truth or an unknown id, and
    LisError when the language data cannot be installed; a check that crashes on a response
    counts as not followed and is reported in ``errors``.
    """
    ids, kwargs = parse_ground_truth(ground_truth)
    texts = response_variants(response, variants)
    result = IFBenchResult(strict=[], loose=[])
    for iid, kw in zip(ids, kwargs):
        check = build_check(iid, kw, prompt)
        result.strict.append(_holds(check, response, iid, result.errors))
        result.loose.append(result.strict[-1] or any(_holds(check, t, iid, result.errors) for t in texts[1:]))
    return result


def score_ifbench(response: str, ground_truth: str | dict[str, Any], prompt: str | None = None,
                  mode: Literal["loose", "strict"] = "loose", variants: Variants = "ifbench8") -> Score:
    """1.0 when every instruction is followed (loose by default), else 0.0; both verdicts in details."""
    res = evaluate(response or "", ground_truth, prompt, variants)
    ids, _ = parse_ground_truth(ground_truth)
    passed = res.loose_all if mode == "loose" else res.strict_all
    details: dict[str, Any] = {
        "mode": mode, "variants": variants, "instruction_ids": ids,
        "loose": res.loose, "strict": res.strict,
        "prompt_loose": res.loose_all, "prompt_strict": res.strict_all,
    }
    if res.errors:
        details["check_errors"] = res.errors
    return Score(value=1.0 if passed else 0.0, scorer=f"ifbench_{mode}", extracted=None, details=details)

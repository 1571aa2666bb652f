"""Multiple-choice letters (chemistry A-D, MedXpertQA A-J), extracted strictly.

A letter is taken only from an explicit answer: a response that is just the letter ("C",
"(C)", "C."), an answer field (``"answer": "C"``, ``answer: C``, ``Answer：C``, ``**Answer:** C``),
"the answer/choice/option is (C)", or a boxed letter (``\\boxed{C}``, ``\\boxed{\\text{C}}``).
When several appear, the last one in the text wins. There is no fallback to a stray capital
letter in prose (the official extractor's last resort, which reads "I think" as I and "A patient"
as A). "A" and "I" followed by a lower-case word are read as English words, not letters.
Letters outside the task's options never count. Multi-answer golds ("A, C") are scored with
set F1 over the extracted letters (:mod:`lis.rewards.f1`), as the official RL reward does.
"""
from __future__ import annotations

import bisect
import re
import string

from lis.rewards.base import Score
from lis.rewards.extract import boxed_spans, strip_thinking
from lis.rewards.f1 import score_set_f1, split_letters

_LIST = r"[A-Za-z](?:\s*(?:,|，|、|and|&)\s*[A-Za-z])*"
_OPEN = r"[\s*_]*[\"'“(\[]?\s*"
_AFTER = r"(?P<after>.{0,3})"
# Each pattern captures the letter list in group "ans".
_PATTERNS = [
    re.compile(r"[\"']answer[\"']\s*:\s*[\"']?\(?(?P<ans>" + _LIST + r")\)?[\"']?" + _AFTER, re.I | re.S),
    re.compile(r"\banswer\b[\s*_]*[:：]" + _OPEN + r"(?P<ans>" + _LIST + r")" + _AFTER, re.I | re.S),
    re.compile(r"\b(?:answer|choice|option)s?\s+(?:is|are|would be|should be)\s*[:：]?" + _OPEN + r"(?P<ans>"
               + _LIST + r")" + _AFTER, re.I | re.S),
]
_ONLY = re.compile(r"^[\s*_]*[\"'(\[]?\s*(?P<ans>" + _LIST + r")\s*[\"')\]]?[\s.。!*_]*$", re.S)
# The longest box contents read as an answer: a list of letters, wrapped in \text{} or $...$, is far shorter.
CHOICE_BOX_CHARS = 256
_WRAPPERS = re.compile(r"\\(?:text|textbf|mathrm|mathbf|textit)\s*\{([^{}]*)\}")


def letters_from_options(n_or_letters: int | str | None, default: str = "ABCD") -> str:
    """The valid letters: an int n gives the first n letters, a string is taken as the letters."""
    if n_or_letters is None:
        return default
    if isinstance(n_or_letters, int):
        return string.ascii_uppercase[:n_or_letters]
    return "".join(dict.fromkeys(ch for ch in n_or_letters.upper() if ch in string.ascii_uppercase))


def _standalone(letters: str, after: str) -> bool:
    """False when the captured text is a word, not a letter: "A patient", "I think", "Cat"."""
    if after[:1].isalnum():
        return False
    return not (letters.upper() in ("A", "I") and re.match(r"\s+[a-z]", after))


def _parse_list(raw: str, valid: str) -> list[str] | None:
    items = [p.strip().upper() for p in re.split(r"\s*(?:,|，|、|\band\b|&)\s*", raw) if p.strip()]
    if not items or any(len(i) != 1 or i not in valid for i in items):
        return None
    return list(dict.fromkeys(items))


def _boxed_letters(text: str, valid: str) -> list[tuple[int, list[str]]]:
    """(position, letters) per ``\\boxed`` start: the first complete box at or after it (one pass over
    the text, then a binary search per start: linear-logarithmic, never a rescan per box)."""
    found = []
    spans = boxed_spans(text)
    span_starts = [box.start for box in spans]
    for match in re.finditer(r"\\boxed\s*\{", text):
        k = bisect.bisect_left(span_starts, match.start())
        if k == len(spans):
            continue
        box = spans[k]
        if box.end - box.begin > CHOICE_BOX_CHARS:
            continue  # not a list of letters; slicing every nested box would be quadratic
        inner = _WRAPPERS.sub(r"\1", box.contents(text)).strip().strip("$ ")
        m = re.fullmatch(r"\(?\s*(" + _LIST + r")\s*\)?\.?", inner)
        if m:
            letters = _parse_list(m.group(1), valid)
            if letters:
                found.append((match.start(), letters))
    return found


def extract_choices(response: str, valid: str = "ABCD") -> list[str] | None:
    """The answered letters (in order, deduplicated), or None when no explicit answer is found."""
    text = strip_thinking(response or "").strip()
    if not text:
        return None
    only = _ONLY.match(text)
    if only and _standalone(only.group("ans"), ""):
        return _parse_list(only.group("ans"), valid)
    candidates: list[tuple[int, list[str]]] = _boxed_letters(text, valid)
    for pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if not _standalone(m.group("ans"), m.group("after")):
                continue
            letters = _parse_list(m.group("ans"), valid)
            if letters:
                candidates.append((m.start("ans"), letters))
    return max(candidates)[1] if candidates else None


def extract_choice(response: str, valid: str = "ABCD") -> str | None:
    """The single answered letter, or None (no explicit answer, or more than one letter)."""
    letters = extract_choices(response, valid)
    return letters[0] if letters and len(letters) == 1 else None


def score_choice(response: str, ground_truth: str, valid: str = "ABCD") -> Score:
    """Exact letter match (1/0); a comma-separated gold is scored by set F1 instead.

    Letters in the gold are always valid, even if ``valid`` omits them.
    """
    gold_letters = split_letters(ground_truth or "")
    valid = valid + "".join(sorted(g for g in gold_letters if len(g) == 1 and g not in valid))
    if "," in (ground_truth or "") or "，" in (ground_truth or ""):
        predicted = extract_choices(response, valid)
        score = score_set_f1(set(predicted) if predicted else None, ground_truth)
        score.details["valid_letters"] = valid
        return score
    letter = extract_choice(response, valid)
    gold = (ground_truth or "").strip().strip("()").upper()
    value = 1.0 if letter is not None and letter == gold else 0.0
    return Score(value=value, scorer="choice", extracted=letter, details={"gold": gold, "valid_letters": valid})

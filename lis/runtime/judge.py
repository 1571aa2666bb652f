"""The ``scoring`` section → the LLM judge (or None: the rule-based fallbacks)."""
from __future__ import annotations

from lis.rewards.judge import Judge
from lis.runtime.models import chat_model


def build_judge(params) -> Judge | None:
    """The configured LLM judge, or None (rule fallbacks)."""
    scoring = params.settings("scoring")
    j = scoring.judge
    if j is None:
        return None
    return Judge(chat_model(params, j.model), repeats=j.repeats, temperature=j.temperature, max_tokens=j.max_tokens,
                 cache_path=params.root / scoring.judge_cache)

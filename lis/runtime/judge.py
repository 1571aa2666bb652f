"""The ``scoring`` section → the LLM judge (or None: the rule-based fallbacks)."""
from __future__ import annotations

from lis.rewards.judge import Judge
from lis.runtime.models import chat_model


def build_judge(params) -> Judge | None:
    """The configured LLM judge, or None (rule fallbacks)."""
    conf = params.section("scoring")["judge"]
    if not conf:
        return None
    return Judge(chat_model(params, conf["model"]), repeats=conf.get("repeats", 4),
                 temperature=conf.get("temperature", 0.7), max_tokens=conf.get("max_tokens", 16384),
                 cache_path=params.root / params.section("scoring")["judge_cache"])

"""One episode's tokens and time, split by who produced them (docs/efficiency.md is the reference).

With reported usage p_k (prompt) and c_k (completion) for model calls k = 1..K:

    prompt       = p_1
    model        = sum_k c_k
    env          = sum_{k>=2} (p_k - p_{k-1} - c_{k-1})  tokens the environment added between calls
    total        = p_1 + model + env  ==  p_K + c_K    the paper's N_total
    billed_total = sum_k p_k + sum_k c_k               what an API bills

Exact from the server's usage, nothing re-tokenised. An episode without usage for every call is
``usage = "missing"`` with no token numbers; a turn whose env tokens are negative (the template
dropped earlier content) counts in ``negative_env_turns``. Time shares are tool time and model
latency over the episode's wall time (``run_task``'s, set-up included).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

# Terminations that are the infrastructure's doing (not the model's): left out of every average.
INFRA_TERMINATIONS = frozenset({"model_error", "model_timeout", "sandbox_error", "error", "interrupted"})
REPORTED, MISSING, NO_CALLS = "reported", "missing", "no_calls"


@dataclass
class TokenSplit:
    """The token split of one conversation (see the module doc). Token fields are None unless
    ``usage == "reported"``."""

    calls: int
    usage: str                                   # reported | missing | no_calls
    prompt: int | None = None
    model: int | None = None
    env: int | None = None
    total: int | None = None
    billed_prompt: int | None = None
    billed_total: int | None = None
    cached: int | None = None                    # sum of reported cached prompt tokens (None: not reported)
    env_per_turn: list[int] = field(default_factory=list)   # env tokens before calls 2..K
    negative_env_turns: int = 0


def split_usage(usage: list[tuple[int | None, int | None, int | None]]) -> TokenSplit:
    """The split of a conversation given each call's (prompt, completion, cached) tokens, in order. A
    prompt count of 0 is not reported: a chat prompt always has tokens (some servers send 0 for unknown)."""
    k = len(usage)
    if k == 0:
        return TokenSplit(calls=0, usage=NO_CALLS)
    if any(p is None or p <= 0 or c is None or c < 0 for p, c, _ in usage):
        return TokenSplit(calls=k, usage=MISSING)
    p = [int(u[0]) for u in usage]
    c = [int(u[1]) for u in usage]
    env_turns = [p[i] - p[i - 1] - c[i - 1] for i in range(1, k)]
    cached = None if any(u[2] is None for u in usage) else sum(int(u[2]) for u in usage)
    split = TokenSplit(calls=k, usage=REPORTED, prompt=p[0], model=sum(c), env=sum(env_turns),
                       billed_prompt=sum(p), cached=cached, env_per_turn=env_turns,
                       negative_env_turns=sum(1 for e in env_turns if e < 0))
    split.total = split.prompt + split.model + split.env
    split.billed_total = split.billed_prompt + split.model
    assert split.total == p[-1] + c[-1]  # telescoping: the identity the definition rests on
    return split


@dataclass
class EpisodeEfficiency:
    """Tokens and time of one finished episode (one trajectory record)."""

    model: str
    domain: str
    mode: str
    task_id: str
    repeat: int
    termination: str
    included: bool                               # False: an infrastructure error, left out of averages
    tokens: TokenSplit
    turns: int
    tool_calls: int
    observation_chars: int
    wall_s: float | None                         # None when the record has no wall time
    llm_s: float
    env_s: float
    sandbox_start_s: float

    @property
    def env_time_share(self) -> float | None:
        return self.env_s / self.wall_s if self.wall_s else None

    @property
    def llm_time_share(self) -> float | None:
        return self.llm_s / self.wall_s if self.wall_s else None

    def flat(self) -> dict[str, Any]:
        """One flat row (CSV): identity, tokens, time and shares."""
        t = asdict(self.tokens)
        t.pop("env_per_turn")
        row = {k: v for k, v in asdict(self).items() if k != "tokens"}
        row.update({f"tokens_{k}": v for k, v in t.items()})
        row["env_time_share"] = self.env_time_share
        row["llm_time_share"] = self.llm_time_share
        return row


def episode_efficiency(record: Mapping[str, Any] | Any) -> EpisodeEfficiency:
    """The efficiency of one trajectory record (a dict as in trajectories.jsonl, or a Trajectory)."""
    rec = record if isinstance(record, Mapping) else record.to_dict()
    steps = rec.get("steps") or []
    usage = [(s.get("prompt_tokens"), s.get("completion_tokens"), s.get("cached_tokens")) for s in steps]
    calls = [c for s in steps for c in (s.get("calls") or [])]
    wall = rec.get("wall_s")
    termination = rec.get("termination") or ""
    return EpisodeEfficiency(
        model=str(rec.get("model", "")), domain=str(rec.get("domain", "")), mode=str(rec.get("mode", "")),
        task_id=str(rec.get("task_id", "")), repeat=int(rec.get("repeat") or 0), termination=termination,
        included=termination not in INFRA_TERMINATIONS, tokens=split_usage(usage), turns=len(steps),
        tool_calls=len(calls), observation_chars=sum(int(c.get("observation_chars") or 0) for c in calls),
        wall_s=float(wall) if wall else None,
        llm_s=sum(float(s.get("llm_latency_s") or 0.0) for s in steps),
        env_s=sum(float(c.get("exec_time_s") or 0.0) for c in calls),
        sandbox_start_s=float(rec.get("sandbox_start_s") or 0.0))

"""The trajectory record: one JSON object per episode, appended to a JSONL the moment
the episode ends (:func:`lis.util.jsonl.append_jsonl`), with everything behaviour and efficiency
analyses need afterwards."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from lis.agent.tools.stderr_order import cannot_order, programs_at_once

SCHEMA_VERSION = 2  # 2: episode_id, task_hash, attempt; interrupted; rewards in a separate scores journal

# How an episode can end. The model's doing: kept and scored.
FINISHED = frozenset({"submitted", "max_turns", "token_budget", "timeout", "answered", "truncated"})
# Not the model's doing: errors, left out of the accuracy, retried (lis eval run: up to eval.max_attempts).
# model_timeout: the episode's time ran out inside a model call (the server never gave a complete answer: an
# outage or a stall is never a score); timeout is the episode's time running out anywhere else.
INFRA = frozenset({"model_error", "model_timeout", "sandbox_error", "error"})
INTERRUPTED = "interrupted"  # Ctrl-C or the episode's own cancellation


def wall_clock_limited(record: "Trajectory") -> bool:
    """Whether a wall-clock limit decided part of the episode (its own timeout, or a command's): on a
    slower or busier machine the same tokens could have gone another way, so a run with one is not
    reproducible from its seed alone (the deterministic mode reports it)."""
    return record.termination == "timeout" or any(c.timed_out for s in record.steps for c in s.calls)


def concurrent_output(record: "Trajectory") -> bool:
    """Whether a command's error output holds messages of two programs that ran at once (a pipeline or
    background jobs writing to one stream): the kernel's scheduler decides their order, so the same
    commands can give another observation. A heuristic (a program's message is a line ``name: ...``);
    the deterministic mode puts such output in a fixed order (:mod:`lis.agent.tools.stderr_order`)."""
    return any(programs_at_once(command, stderr) for command, stderr in _commands_and_stderr(record))


def unordered_output(record: "Trajectory") -> bool:
    """Whether a command's error output holds what the deterministic mode cannot put in one order
    (:func:`lis.agent.tools.stderr_order.cannot_order`: a message with continuation lines from a program
    that ran as two processes at once), so that an episode with one is not reproducible for sure
    (docs/training.md, "Determinism")."""
    return any(cannot_order(command, stderr) for command, stderr in _commands_and_stderr(record))


def _commands_and_stderr(record: "Trajectory"):
    """Each shell command of ``record`` with the error output its observation shows."""
    for s in record.steps:
        for c in s.calls:
            if c.tool == "execute_bash" and isinstance(c.arguments, dict):
                yield str(c.arguments.get("command") or ""), (c.observation or "").partition("\n[STDERR]\n")[2]


# What a field's value must be beyond its type, for a record read back (lis.records.record_model: a
# time is finite and not negative, a count a whole number >= 0, a reward in [0, 1], ...).
COUNT, TIME = {"record": "count"}, {"record": "time"}


@dataclass
class ToolCallRecord:
    id: str = ""
    tool: str | None = None
    arguments: dict[str, Any] | None = None  # full arguments: the command text, the edited path and content
    raw_arguments: str | None = None       # as the model sent them (when they did not parse)
    observation: str = ""
    exit_code: int | None = None
    exec_time_s: float = field(default=0.0, metadata=TIME)
    error: str | None = None               # bad_json | unknown_tool | missing_argument | editor | ...
    timed_out: bool = False
    observation_chars: int = field(default=0, metadata=COUNT)


@dataclass
class Step:
    """One model turn and the tool calls it made."""

    index: int = field(default=0, metadata=COUNT)
    content: str | None = None
    reasoning: str | None = None
    calls: list[ToolCallRecord] = field(default_factory=list)
    llm_latency_s: float = field(default=0.0, metadata=TIME)
    prompt_tokens: int | None = field(default=None, metadata=COUNT)
    completion_tokens: int | None = field(default=None, metadata=COUNT)
    cached_tokens: int | None = field(default=None, metadata=COUNT)
    finish_reason: str | None = None
    text_tool_calls: bool = False          # the calls were parsed from <tool_call> text
    completion_ids: list[int] | None = None  # local models only (RL): the exact sampled ids
    logprobs: list[float] | None = None
    invalid_text: int = field(default=0, metadata=COUNT)  # invalid Unicode in the model's output, replaced by U+FFFD
    reply_cut: int = field(default=0, metadata=COUNT)  # the reply was over the backend's size cap (bytes read, dropped)


@dataclass
class Trajectory:
    task_id: str = field(metadata={"record": "id"})
    model: str
    mode: str                              # sandbox | vanilla | sandbox_inline
    domain: str = ""
    seed: int | None = None
    repeat: int = field(default=0, metadata=COUNT)
    run_id: str = ""
    params_hash: str = ""
    image: str = ""
    backend: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    answer: str = ""
    termination: str = ""                  # one of FINISHED or INFRA, or INTERRUPTED (above)
    error: str | None = None
    reward: float | None = field(default=None, metadata={"record": "fraction"})
    score: dict[str, Any] | None = None
    started_utc: str = ""
    wall_s: float = field(default=0.0, metadata=TIME)
    llm_s: float = field(default=0.0, metadata=TIME)
    env_s: float = field(default=0.0, metadata=TIME)
    sandbox_start_s: float = field(default=0.0, metadata=TIME)
    acquire_wait_s: float = field(default=0.0, metadata=TIME)  # waiting for a sandbox (a pool slot, the host's start admission)
    prompt_tokens: int = field(default=0, metadata=COUNT)
    completion_tokens: int = field(default=0, metadata=COUNT)
    cached_tokens: int = field(default=0, metadata=COUNT)
    turns: int = field(default=0, metadata=COUNT)
    episode_id: str = ""                   # unique per episode run; scores refer to it
    task_hash: str = ""                    # content hash of the task the episode ran
    attempt: int = field(default=1, metadata={"record": "attempt"})  # 1 + earlier error records of the same episode key
    invalid_text: int = field(default=0, metadata=COUNT)  # sum of the steps' invalid_text (lis.util.text)
    schema_version: int = SCHEMA_VERSION

    @property
    def key(self) -> str:
        """What identifies an episode for resuming: task, repeat and mode."""
        return episode_key(self.task_id, self.repeat, self.mode)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "trajectory record") -> "Trajectory":
        """The episode of a record, validated (:func:`lis.records.record_model`: types, finite
        non-negative times and counts, a reward in [0, 1]); raises :class:`lis.records.RecordError`
        naming ``where`` and the field."""
        from lis.records import check  # lazy: pydantic (0.2 s); writing an episode validates nothing

        d = check(cls, d, where=where)
        steps = []
        for s in d.pop("steps", []):
            s["calls"] = [ToolCallRecord(**c) for c in s.get("calls", [])]
            steps.append(Step(**s))
        return cls(**d, steps=steps)

    def totals(self) -> None:
        """Recompute the token and time totals from the steps."""
        self.turns = len(self.steps)
        self.prompt_tokens = sum(s.prompt_tokens or 0 for s in self.steps)
        self.completion_tokens = sum(s.completion_tokens or 0 for s in self.steps)
        self.cached_tokens = sum(s.cached_tokens or 0 for s in self.steps)
        self.llm_s = sum(s.llm_latency_s for s in self.steps)
        self.env_s = sum(c.exec_time_s for s in self.steps for c in s.calls)
        self.invalid_text = sum(s.invalid_text or 0 for s in self.steps)


def episode_key(task_id: str, repeat: int, mode: str) -> str:
    return f"{task_id}#{repeat}@{mode}"

"""Supervised warm-up of a small causal LM on agent episodes, and the rate of valid tool calls.

The loss is on assistant tokens only: each assistant turn after its ``<|im_start|>assistant\n``
header, up to and including its end-of-turn token. System and user prompts, tool observations
and assistant turns marked ``NO_LOSS`` (bad turns kept as context) are masked out, as in standard
SFT. The conversation is rendered once by the chat template, exactly as the model sees it at
inference time, and tokens are mapped back to turns by their character offsets. Plain PyTorch on
CPU: same seed, same thread count → same weights.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from lis.models.base import Sampling
from lis.models.toolcalls import arguments_as_dicts, check_tool_call

IGNORE = -100
NO_LOSS = "lis_no_loss"     # an assistant message with this key set is context, not a target
TURN_START = "<|im_start|>assistant\n"


@dataclass
class Example:
    """One encoded episode: ids and labels (-100 off the trained-on assistant turns)."""

    ids: list[int]
    labels: list[int]


def _token_index(offsets: list[tuple[int, int]], char: int, what: str) -> int:
    """The index of the first token starting at or after ``char``; raises ValueError when a token
    straddles ``char`` (the turn boundary is not a token boundary, so labels cannot be placed)."""
    for i, (a, b) in enumerate(offsets):
        if a >= char:
            return i
        if b > char:
            raise ValueError(f"a token crosses the {what} boundary at character {char}")
    return len(offsets)


def encode(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Example:
    """Ids and labels of an episode: labels are the ids of each assistant turn (not marked
    ``NO_LOSS``) after its header, up to and including its end-of-turn token; -100 elsewhere.

    Raises ValueError when the rendered text does not hold one header per assistant message, or
    a token crosses a turn boundary.
    """
    conv = [{k: v for k, v in m.items() if k != NO_LOSS} for m in arguments_as_dicts(messages)]
    text = tokenizer.apply_chat_template(conv, tools=tools, tokenize=False)
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]
    labels = [IGNORE] * len(ids)
    end_mark = tokenizer.eos_token
    pos = 0
    for m in messages:
        if m["role"] != "assistant":
            continue
        head = text.find(TURN_START, pos)
        if head < 0:
            raise ValueError("an assistant message has no turn header in the rendered conversation")
        start = head + len(TURN_START)
        stop = text.find(end_mark, start)
        stop = len(text) if stop < 0 else stop + len(end_mark)
        pos = stop
        if m.get(NO_LOSS):
            continue
        lo, hi = _token_index(offsets, start, "turn start"), _token_index(offsets, stop, "turn end")
        labels[lo:hi] = ids[lo:hi]
    return Example(ids, labels)


def batch_loss(model: Any, batch: list[Example]) -> torch.Tensor:
    """Mean next-token cross-entropy over the labelled tokens of ``batch``.

    Sequences are right-padded (causal attention never lets a real token see a pad, so no mask
    is needed and the fused causal attention kernel applies); the output layer runs on labelled
    positions only.
    """
    width = max(len(ex.ids) for ex in batch)
    x = torch.zeros((len(batch), width), dtype=torch.long)
    y = torch.full((len(batch), width), IGNORE, dtype=torch.long)
    for r, ex in enumerate(batch):
        x[r, : len(ex.ids)] = torch.tensor(ex.ids)
        y[r, : len(ex.ids)] = torch.tensor(ex.labels)
    hidden = model.base_model(input_ids=x).last_hidden_state
    target = y[:, 1:]
    keep = target != IGNORE
    logits = model.get_output_embeddings()(hidden[:, :-1][keep])
    return torch.nn.functional.cross_entropy(logits.float(), target[keep])


def length_batches(data: list[Example], batch_size: int) -> list[list[Example]]:
    """``data`` sorted by length (ties: original order) and cut into batches of ``batch_size``:
    episodes of similar length train together, so little compute goes to padding."""
    order = sorted(range(len(data)), key=lambda i: (len(data[i].ids), i))
    return [[data[i] for i in order[k:k + batch_size]] for k in range(0, len(order), batch_size)]


@dataclass
class WarmupResult:
    steps: int
    first_loss: float
    final_loss: float
    examples: int
    tokens_per_step: float


def train(model: Any, data: list[Example], steps: int, seed: int, batch_size: int = 4, lr: float = 5e-3,
          on_step: Callable[[int, float], None] | None = None) -> WarmupResult:
    """AdamW (warm-up then linear decay) on ``data`` for ``steps`` steps.

    Batches come from :func:`length_batches`, visited in an order shuffled anew each pass by a
    generator seeded with ``seed``. ``final_loss`` is the mean over the last tenth of the steps.
    """
    rng = random.Random(seed)
    batches = length_batches(data, batch_size)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.05, 1 - s / max(steps, 1)))
    first = float("nan")
    tail: list[float] = []
    tokens = 0
    queue: list[list[Example]] = []
    for step in range(steps):
        if not queue:
            queue = rng.sample(batches, len(batches))
        batch = queue.pop()
        tokens += sum(len(ex.ids) for ex in batch)
        loss = batch_loss(model, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        value = float(loss.detach())
        if step == 0:
            first = value
        if step >= steps - max(1, steps // 10):
            tail.append(value)
        if on_step:
            on_step(step + 1, value)
    model.eval()
    last = sum(tail) / len(tail) if tail else float("nan")
    return WarmupResult(steps, round(first, 4), round(last, 4), len(data), round(tokens / max(steps, 1), 1))


def tool_call_rate(chat_model: Any, episodes: list[Any], seed: int, sampling: Sampling | None = None,
                   max_turns: int | None = None) -> dict[str, Any]:
    """The fraction of sampled assistant turns that parse into valid tool calls.

    ``episodes`` have ``messages`` and ``tools`` (:class:`~lis.train.teacher.episodes.Episode`);
    those without tools (vanilla) are skipped. Each trained-on assistant turn is a test, up to
    ``max_turns`` in all: the model gets the conversation before it and samples one turn with
    ``sampling`` (default: temperature 1, at most 96 tokens), seeded ``seed + k``; the turn counts
    as valid when it has at least one tool call and every call passes :func:`check_tool_call`.
    """
    base = Sampling(temperature=1.0, max_tokens=96).override(sampling)
    valid = total = 0
    reasons: dict[str, int] = {}
    for ep in episodes:
        if not ep.tools:
            continue
        for i, m in enumerate(ep.messages):
            if m["role"] != "assistant" or m.get(NO_LOSS) or (max_turns is not None and total >= max_turns):
                continue
            res = chat_model.chat(ep.messages[:i], tools=ep.tools, sampling=base.override(Sampling(seed=seed + total)))
            calls = res.message.get("tool_calls") or []
            why = "no tool call parsed" if not calls else next(
                (r for r in (check_tool_call(c, ep.tools) for c in calls) if r), None)
            total += 1
            if why is None:
                valid += 1
            else:
                key = why[:60]
                reasons[key] = reasons.get(key, 0) + 1
    sampled = {k: v for k, v in base.__dict__.items() if v not in (None, {})}
    return {"valid": valid, "turns": total, "rate": round(valid / total, 4) if total else 0.0,
            "sampling": sampled, "failures": dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:5])}

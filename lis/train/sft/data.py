"""SFT data: episodes as token ids with labels on assistant turns only.

The loss is on assistant tokens only: each assistant turn after its ``<|im_start|>assistant\n``
header, up to and including its end-of-turn token. System and user prompts, tool observations
and assistant turns marked ``NO_LOSS`` (bad turns kept as context) are masked out, as in standard
SFT. The conversation is rendered once by the chat template, exactly as the model sees it at
inference time, and tokens are mapped back to turns by their character offsets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from lis.agent.tools.schemas import TOOLS
from lis.models.toolcalls import arguments_as_dicts
from lis.records import NO_LOSS
from lis.train.lora import generation_model

IGNORE = -100
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
    """Ids and labels of an episode (module doc). Raises ValueError when the rendered text does not hold
    one header per assistant message, or a token crosses a turn boundary."""
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


LOGITS_CHUNK = 4096   # labelled positions whose logits exist at once (lis train plan models this)


def batch_loss(model: Any, batch: list[Example]) -> torch.Tensor:
    """Mean next-token cross-entropy over the labelled tokens of ``batch``. Right padding needs no mask
    (causal attention never lets a real token see a pad). The output layer runs on labelled positions
    only, ``LOGITS_CHUNK`` at a time and recomputed in the backward pass: whole logits at the paper's
    lengths would take tens of GB."""
    width = max(len(ex.ids) for ex in batch)
    x = torch.zeros((len(batch), width), dtype=torch.long)
    y = torch.full((len(batch), width), IGNORE, dtype=torch.long)
    for r, ex in enumerate(batch):
        x[r, : len(ex.ids)] = torch.tensor(ex.ids)
        y[r, : len(ex.ids)] = torch.tensor(ex.labels)
    lm = generation_model(model)
    device = next(lm.parameters()).device
    x, y = x.to(device), y.to(device)
    hidden = lm.base_model(input_ids=x).last_hidden_state
    target = y[:, 1:]
    keep = target != IGNORE
    head = lm.get_output_embeddings()
    h, t = hidden[:, :-1][keep], target[keep]
    if h.shape[0] <= LOGITS_CHUNK:
        return torch.nn.functional.cross_entropy(head(h).float(), t)
    from torch.utils.checkpoint import checkpoint

    total = sum(checkpoint(_chunk_nll, head, h[i:i + LOGITS_CHUNK], t[i:i + LOGITS_CHUNK], use_reentrant=False)
                for i in range(0, h.shape[0], LOGITS_CHUNK))
    return total / h.shape[0]


def _chunk_nll(head: Any, h: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(head(h).float(), t, reduction="sum")


def length_batches(data: list[Example], batch_size: int) -> list[list[Example]]:
    """``data`` sorted by length (ties: original order) and cut into batches of ``batch_size``:
    episodes of similar length train together, so little compute goes to padding."""
    order = sorted(range(len(data)), key=lambda i: (len(data[i].ids), i))
    return [[data[i] for i in order[k:k + batch_size]] for k in range(0, len(order), batch_size)]


@dataclass
class RecordEpisode:
    """A trajectory record as an episode to train on (messages, the tools its prompt offered)."""
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    domain: str
    mode: str


def record_episode(rec: dict[str, Any]) -> RecordEpisode:
    """The conversation of a trajectory record (``teacher.no_loss_turns`` marked ``NO_LOSS``)."""
    skip = set((rec.get("teacher") or {}).get("no_loss_turns") or ())
    messages, k = [], 0
    for m in rec["messages"]:
        m = dict(m)
        if m.get("role") == "assistant":
            if k in skip:
                m[NO_LOSS] = True
            k += 1
        messages.append(m)
    return RecordEpisode(messages, None if rec.get("mode") == "vanilla" else TOOLS, rec.get("domain", ""),
                         rec.get("mode", ""))


def examples_from_records(records: list[dict[str, Any]], tokenizer: Any, max_tokens: int) -> tuple[list[Example], dict]:
    """Examples of the records (each encoded once), dropping those longer than ``max_tokens`` and
    those whose turn boundaries are not token boundaries; returns them and the counts."""
    out, dropped_long, dropped_bad = [], 0, 0
    for rec in records:
        ep = record_episode(rec)
        try:
            ex = encode(tokenizer, ep.messages, ep.tools)
        except ValueError:
            dropped_bad += 1
            continue
        if len(ex.ids) > max_tokens:
            dropped_long += 1
            continue
        out.append(ex)
    return out, {"examples": len(out), "dropped_too_long": dropped_long, "dropped_unaligned": dropped_bad,
                 "trained_tokens": sum(sum(1 for y in ex.labels if y != IGNORE) for ex in out),
                 "tokens": sum(len(ex.ids) for ex in out)}

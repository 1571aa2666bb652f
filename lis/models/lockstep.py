"""Batches formed by rule, not by timing: the deterministic rollout mode's engine.

    with policy.lockstep(slots=4) as step:          # LocalHFModel: its engine behind a Lockstep
        # slot s's thread (an episode after another) generates inside ``with step.slot(s):``
        ...

The batch engine decodes together whatever requests are waiting when it steps, so which turns share
a forward pass depends on when tool calls return; a batch of another shape rounds the logits
differently and a token drawn near a boundary flips. A Lockstep removes the timing: the work is split
into fixed **slots** (a thread each, running its own fixed list of episodes), and a **round** is
decoded only once every live slot has posted its next turn, handed to the engine in one go in slot
order (:meth:`BatchEngine.generate_many <lis.models.batch_engine.BatchEngine.generate_many>`), so the
batch of every decode step is a function of the tokens alone. A round never waits for a slot that left.
The price: a round starts when the slowest slot's tool call has returned (``round_stats``).

Every slot must be able to make progress on its own: a slot that blocks on another (a sandbox pool
smaller than the slots, a lock held across a model call) deadlocks the round, so callers size the
slots by the pool (:func:`lis.train.rollout.group.run_group`).
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Iterator

from lis.models.base import ModelError
from lis.util import cancel

POLL_S = 0.05


class _Post:
    """One slot's turn of a round: the call and, once the round ran, its result."""

    __slots__ = ("call", "result", "done", "posted")

    def __init__(self, call: dict[str, Any]):
        self.call = call
        self.result: Any = None
        self.done = threading.Event()
        self.posted = time.monotonic()


class Lockstep:
    """An engine (``generate``) in front of ``inner`` (which must have ``generate_many``) that decodes
    in rounds of every live slot's turn, in slot order (see the module doc)."""

    def __init__(self, inner: Any, slots: int, name: str = "local"):
        if not callable(getattr(inner, "generate_many", None)):
            raise ModelError(f"model '{name}': deterministic rollouts need the in-process batch engine; "
                             f"{type(inner).__name__} cannot queue a round in one go",
                             "generate in the training process (grpo.vllm.mode: none) or turn the "
                             "deterministic mode off")
        if int(slots) < 1:
            raise ModelError(f"model '{name}': a lockstep needs at least one slot (got {slots})", "fix the call")
        self.inner = inner
        self.name = name
        self._live = set(range(int(slots)))
        self._posted: dict[int, _Post] = {}
        self._cond = threading.Condition()
        self._local = threading.local()
        self.round_stats = {"rounds": 0, "requests": 0, "max_round": 0, "wait_s": 0.0}

    @contextlib.contextmanager
    def slot(self, index: int) -> Iterator[None]:
        """Run the calling thread's generations as slot ``index``; on exit the slot leaves the rounds."""
        if index not in self._live:
            raise ModelError(f"model '{self.name}': lockstep slot {index} is not live", "use each slot once")
        self._local.slot = index
        try:
            yield
        finally:
            self._local.slot = None
            self._leave(index)

    def generate(self, prompt_ids: list[int], max_new_tokens: int, **kwargs: Any) -> Any:
        """The engine's ``generate``, decoded with the round of every live slot's turn."""
        slot = getattr(self._local, "slot", None)
        if slot is None:
            raise ModelError(f"model '{self.name}': a generation outside the lockstep's slots would break its rounds",
                             "generate inside `with lockstep.slot(i)`")
        post = _Post({"prompt_ids": prompt_ids, "max_new_tokens": max_new_tokens, **kwargs})
        with self._cond:
            if slot in self._posted:
                raise ModelError(f"model '{self.name}': lockstep slot {slot} posted twice in one round",
                                 "generate from one thread per slot")
            self._posted[slot] = post
            batch = self._ready()
        if batch:
            self._run(batch)
        while not post.done.wait(POLL_S):
            if cancel.requested():
                raise cancel.Interrupted("interrupted")
        if isinstance(post.result, BaseException):
            raise post.result
        return post.result

    def __getattr__(self, name: str) -> Any:  # forget_prefixes, close, stats of the engine behind
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _leave(self, slot: int) -> None:
        with self._cond:
            self._live.discard(slot)
            self._posted.pop(slot, None)  # a turn it posted and stopped waiting for (cancellation): not run
            batch = self._ready()
        if batch:
            self._run(batch)

    def _ready(self) -> list[_Post]:
        """The round's turns, in slot order, once every live slot posted (taken); else nothing."""
        if not self._posted or set(self._posted) != self._live:
            return []
        batch = [self._posted[s] for s in sorted(self._posted)]
        self._posted.clear()
        return batch

    def _run(self, batch: list[_Post]) -> None:
        now = time.monotonic()
        self.round_stats["rounds"] += 1
        self.round_stats["requests"] += len(batch)
        self.round_stats["max_round"] = max(self.round_stats["max_round"], len(batch))
        self.round_stats["wait_s"] += sum(now - p.posted for p in batch)
        try:
            results: list[Any] = self.inner.generate_many([p.call for p in batch])
        except BaseException as e:  # noqa: BLE001 - every turn of the round gets it
            results = [e] * len(batch)
        for post, result in zip(batch, results):
            post.result = result
            post.done.set()

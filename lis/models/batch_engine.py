"""A batching generation engine for a local transformers model: many threads, one forward pass per step.

    engine = BatchEngine(model, stop_ids={2, 0}, max_batch=64)
    draw = engine.generate(prompt_ids, 256, temperature=0.7, top_p=0.8, seed=3)   # from any thread
    draw.ids, draw.logprobs, draw.stopped
    engine.close()

Every ``generate`` call blocks its thread until its sequence is done; one background worker runs the
model with continuous batching on transformers' ``DynamicCache``: a new request is prefilled on its
own (identical prompts arriving together share one prefill: a GRPO group's first turn), left-padded
and joins the running batch at the next step. Decode steps use a 2-D attention mask and per-sequence
``position_ids``, so padding never changes what a sequence sees; a finished sequence leaves at once.

Sampling (temperature, top-k, top-p, repetition penalty, generator) is per request and follows
:func:`lis.models.sampler.sample` (:func:`pick_tokens`). A request alone, prefilled whole, computes
exactly what ``sample`` computes; in a batch or after a cached prefix the matrix products differ by
float rounding, so greedy ids and seeded draws stay the same unless two tokens nearly tie.

Prefix cache (``prefix_cache_mb``, off by default: on the CPU it saves prefill tokens, not time, and
costs bit-exact repeats): the caches of finished and preempted sequences are kept, least recently used
first out; a request prefills only what follows the longest prefix it shares with one (vLLM's
automatic prefix caching).

Memory: a batch holds at most ``max_batch`` sequences and ``max_batch_tokens`` cache positions (rows x
padded length). A request is admitted on its current length (``max_new_tokens`` reserves nothing);
before a decode step that would overflow, the most recently admitted rows are preempted (vLLM's
recompute preemption): each goes back to the front of the queue with its ids, log-probabilities,
generator and stop rule, and is prefilled again when readmitted. One row always stays. Models whose
cache is not a plain key/value cache (linear attention) are served one request at a time via ``sample``.

Errors: a bad request raises ModelError in the caller; an exception in the worker fails the requests
it concerned (traceback in the log) and the engine goes on; cancellation (:mod:`lis.util.cancel`)
raises ``Interrupted`` in every waiting caller and drops their sequences.
"""
from __future__ import annotations

import atexit
import logging
import secrets
import threading
import time
import weakref
from collections import OrderedDict, deque
from typing import Any, Callable

import numpy as np
import torch

from lis.models.base import ModelError
from lis.models.sampler import Draw, last_logits_kwargs, penalises, pick_tokens, sample
from lis.util import cancel

log = logging.getLogger("lis.models.batch")

DEFAULT_MAX_BATCH_TOKENS = 1 << 17  # KV-cache positions of a whole batch (rows x padded length)
DEFAULT_PREFIX_CACHE_MB = 0         # off (see the module doc); models.<name>.prefix_cache_mb turns it on
POLL_S = 0.05                       # how often a waiting caller looks at the cancellation flag
IDLE_S = 0.5                        # how often an idle worker checks that its engine still exists
BATCHABLE_LAYER_TYPES = frozenset({"full_attention", "sliding_attention"})


class _Request:
    """One sequence: its settings, what was drawn so far, and its place in the batch."""

    def __init__(self, prompt: list[int], max_new: int, temperature: float, top_k: int | None, top_p: float | None,
                 repetition_penalty: float | None, generator: torch.Generator, stop_ids: frozenset[int]):
        self.prompt = prompt
        self.max_new = max_new
        self.temperature = temperature
        self.top_k = top_k
        self.top_p = top_p
        self.repetition_penalty = repetition_penalty
        self.generator = generator
        self.stop_ids = stop_ids
        self.ids: list[int] = []
        self.logprobs: list[float] = []
        self.stopped = False
        self.error: BaseException | None = None
        self.abandoned = False             # its caller stopped waiting (cancellation)
        self.done = threading.Event()
        self.arrival = time.monotonic()
        self.seen: torch.Tensor | None = None  # prompt + drawn ids, only for a repetition penalty
        self.pos = 0                       # real tokens in the KV cache (= position of the next input)
        self.admitted = 0                  # when it last joined the batch (the engine's count of joins)

    @property
    def length(self) -> int:
        """Its tokens so far (prompt + drawn ids): what an admission prefills, and the cache
        positions it holds once it joined (the last drawn id is fed by the next decode step)."""
        return len(self.prompt) + len(self.ids)

    def context(self) -> list[int]:
        """Prompt + drawn ids: the tokens an admission prefills (a preempted request's too)."""
        return self.prompt + self.ids

    @property
    def penalised(self) -> bool:
        return penalises(self.repetition_penalty)

    def fail(self, error: BaseException) -> None:
        if not self.done.is_set():
            self.error = error
            self.done.set()


class BatchEngine:
    """Thread-safe batched generation around one causal LM (see the module doc).

    ``stop_ids``: a sequence ends after any of these ids (included in its ids). ``max_wait_s``: when
    the engine is idle, how long the first request waits for others before the first step.
    """

    def __init__(self, model: Any, stop_ids: set[int], max_batch: int = 64, max_wait_s: float = 0.005, *,
                 max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS, prefix_cache_mb: float = DEFAULT_PREFIX_CACHE_MB,
                 name: str = "local"):
        if int(max_batch) < 1 or float(max_wait_s) < 0 or int(max_batch_tokens) < 1 or float(prefix_cache_mb) < 0:
            raise ModelError(f"model '{name}': batch engine needs max_batch >= 1, max_wait_s >= 0, "
                             f"max_batch_tokens >= 1 and prefix_cache_mb >= 0 (got {max_batch}, {max_wait_s}, "
                             f"{max_batch_tokens}, {prefix_cache_mb})", "fix the engine settings")
        self.model = model
        self.name = name
        self.stop_ids = frozenset(int(i) for i in stop_ids)
        self.max_batch = int(max_batch)
        self.max_wait_s = float(max_wait_s)
        self.max_batch_tokens = int(max_batch_tokens)
        self.device = next(model.parameters()).device
        embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
        self.vocab_size: int | None = getattr(embeddings, "num_embeddings", None)
        self.batched = _batchable(model)
        if not self.batched:
            log.info("model %s: its cache is not a plain key/value cache; generating one request at a time", name)
        # what the worker reports (read-only for others)
        self.stats = {"steps": 0, "rows_stepped": 0, "max_rows": 0, "prefills": 0, "shared_prefills": 0,
                      "tokens": 0, "prefill_tokens": 0, "prefix_hits": 0, "prefix_tokens": 0,
                      "preemptions": 0, "recomputed_tokens": 0, "max_positions": 0}
        self._prefixes = _PrefixStore(int(float(prefix_cache_mb) * (1 << 20)))  # worker thread only
        self._forget = False
        self._cond = threading.Condition()
        self._queue: deque[_Request] = deque()
        self._closed = False
        self._broken: str | None = None
        # the batch (worker thread only)
        self._rows: list[_Request] = []
        self._cache: Any = None
        self._mask: torch.Tensor | None = None
        self._joins = 0                    # rows that joined the batch so far (their admission order)
        self._thread = threading.Thread(target=_work, args=(weakref.ref(self),), name=f"lis-batch-{name}",
                                        daemon=True)
        self._thread.start()
        _LIVE.add(self)

    # -- callers -----------------------------------------------------------------------------
    def generate(self, prompt_ids: list[int], max_new_tokens: int, *, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, repetition_penalty: float | None = None,
                 seed: int | None = None, generator: torch.Generator | None = None,
                 stop_ids: set[int] | None = None) -> Draw:
        """Draw up to ``max_new_tokens`` tokens after ``prompt_ids`` (blocks until done).

        ``seed`` seeds a fresh generator for this call; without it ``generator`` (a CPU
        ``torch.Generator``, used by the worker thread only) is used, else a random one. ``stop_ids``
        replaces the engine's for this call. Raises ModelError or ``cancel.Interrupted``.
        """
        cancel.check()
        req = self._request(prompt_ids, max_new_tokens, temperature, top_k, top_p, repetition_penalty, seed,
                            generator, stop_ids)
        if req.done.is_set():  # max_new_tokens 0
            return Draw([], [], False)
        self._enqueue([req])
        return self._await(req)

    def generate_many(self, calls: list[dict[str, Any]]) -> list[Draw | BaseException]:
        """Several :meth:`generate` calls (each a dict of its arguments) queued at once, in this order,
        so that the worker admits them together (:class:`~lis.models.lockstep.Lockstep`). Each result
        is its Draw, or the error that call alone would have raised."""
        cancel.check()
        reqs: list[_Request | BaseException] = []
        for call in calls:
            call = dict(call)
            try:
                reqs.append(self._request(call.pop("prompt_ids"), call.pop("max_new_tokens"), **call))
            except ModelError as e:
                reqs.append(e)
        live = [r for r in reqs if isinstance(r, _Request) and not r.done.is_set()]
        if live:
            self._enqueue(live)
        out: list[Draw | BaseException] = []
        for req in reqs:
            if isinstance(req, BaseException):
                out.append(req)
                continue
            try:
                out.append(self._await(req))
            except ModelError as e:
                out.append(e)
        return out

    def _request(self, prompt_ids: Any, max_new_tokens: Any, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None, repetition_penalty: float | None = None, seed: int | None = None,
                 generator: torch.Generator | None = None, stop_ids: set[int] | None = None) -> _Request:
        """A checked request (already done when ``max_new_tokens`` is 0); ModelError when it is bad."""
        prompt = self._check(prompt_ids, max_new_tokens, temperature, top_k, top_p, repetition_penalty)
        if seed is not None:
            gen = torch.Generator().manual_seed(int(seed))
        else:
            gen = generator if generator is not None else torch.Generator().manual_seed(secrets.randbits(63))
        stops = self.stop_ids if stop_ids is None else frozenset(int(i) for i in stop_ids)
        req = _Request(prompt, int(max_new_tokens), float(temperature), top_k, top_p, repetition_penalty, gen, stops)
        if max_new_tokens == 0:
            req.done.set()
        return req

    def _enqueue(self, reqs: list[_Request]) -> None:
        """Queue ``reqs`` in one go (the worker sees all of them or none)."""
        with self._cond:
            if self._closed or self._broken:
                raise ModelError(f"model '{self.name}': the batch engine is "
                                 f"{'closed' if self._closed else 'stopped (' + str(self._broken) + ')'}",
                                 "load the model again")
            self._queue.extend(reqs)
            self._cond.notify_all()

    def _await(self, req: _Request) -> Draw:
        """Wait for ``req`` (watching for cancellation and a dead worker); its Draw, or its error raised."""
        while not req.done.wait(POLL_S):
            if cancel.requested():
                req.abandoned = True
                raise cancel.Interrupted("interrupted")
            if not self._thread.is_alive() and not req.done.is_set():
                raise ModelError(f"model '{self.name}': the batch engine's worker is gone", "load the model again")
        if req.error is not None:
            raise req.error
        return Draw(list(req.ids), list(req.logprobs), req.stopped)

    def forget_prefixes(self) -> None:
        """Drop every kept cache before the next request is admitted: call it when the model's
        weights changed (a training step), since the kept keys and values were computed with the old
        ones."""
        with self._cond:
            self._forget = True

    def close(self) -> None:
        """Stop the worker; waiting and later calls raise ModelError. Idempotent."""
        with self._cond:
            self._closed = True
            pending = list(self._queue)
            self._queue.clear()
            self._cond.notify_all()
        for req in pending:
            req.fail(_closed_error(self.name))
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=30)

    def __enter__(self) -> "BatchEngine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _check(self, prompt_ids: Any, max_new_tokens: Any, temperature: Any, top_k: Any, top_p: Any,
               repetition_penalty: Any) -> list[int]:
        try:
            prompt = [int(t) for t in prompt_ids]
        except (TypeError, ValueError):
            raise ModelError(f"model '{self.name}': prompt ids must be a list of integers", "pass token ids") from None
        if not prompt:
            raise ModelError(f"model '{self.name}': empty prompt", "pass at least one token id")
        if min(prompt) < 0 or (self.vocab_size is not None and max(prompt) >= self.vocab_size):
            bad = next(t for t in prompt if t < 0 or (self.vocab_size is not None and t >= self.vocab_size))
            raise ModelError(f"model '{self.name}': token id {bad} is outside the vocabulary (0..{self.vocab_size})",
                             "tokenize with the model's own tokenizer")
        if not isinstance(max_new_tokens, int) or max_new_tokens < 0:
            raise ModelError(f"model '{self.name}': max_new_tokens must be an integer >= 0 (got {max_new_tokens!r})",
                             "fix the call")
        bad_setting = (temperature is None or temperature < 0 or (top_k is not None and top_k < 0)
                       or (top_p is not None and not 0 < top_p <= 1)
                       or (repetition_penalty is not None and repetition_penalty <= 0))
        if bad_setting:
            raise ModelError(f"model '{self.name}': invalid sampling (temperature={temperature}, top_k={top_k}, "
                             f"top_p={top_p}, repetition_penalty={repetition_penalty})",
                             "temperature >= 0, top_k >= 0, 0 < top_p <= 1, repetition_penalty > 0")
        return prompt

    # -- the worker --------------------------------------------------------------------------
    def _tick(self) -> bool:
        """One round of the worker: admit what arrived, run one decode step. False: stop."""
        admitted = self._take()
        if admitted is None:
            self._fail_rows(_closed_error)
            return False
        if cancel.requested():
            with self._cond:
                admitted += list(self._queue)
                self._queue.clear()
            for req in admitted:
                req.fail(cancel.Interrupted("interrupted"))
            self._fail_rows(lambda name: cancel.Interrupted("interrupted"))
            return True
        if not self.batched:
            for req in admitted:
                self._sample_alone(req)
            return True
        with torch.inference_mode():
            for group in _by_context(admitted):
                self._admit(group)
            self._drop(lambda r: r.abandoned)
            if self._rows:
                try:
                    self._step()
                except Exception as e:  # noqa: BLE001 - every waiting caller gets it, then the batch starts afresh
                    log.exception("model %s: decode step of %d sequences failed", self.name, len(self._rows))
                    self._fail_rows(lambda name: _failed(name, "a decode step", e))
        return True

    def _take(self) -> list[_Request] | None:
        """The requests to admit now (waiting for the first ones when idle); None once closed."""
        with self._cond:
            if self._closed:
                return None
            if not self._rows:
                if not self._queue:
                    self._cond.wait(IDLE_S)
                if self._queue and self.max_wait_s > 0:  # let the others of a group arrive
                    deadline = self._queue[0].arrival + self.max_wait_s
                    while len(self._queue) < self.max_batch and not self._closed:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            break
                        self._cond.wait(left)
                if self._closed:
                    return None
            if self._forget:
                self._prefixes.clear()
                self._forget = False
            admitted: list[_Request] = []
            while self._queue:
                req = self._queue[0]
                if req.abandoned or req.done.is_set():
                    self._queue.popleft()
                    continue
                if not self._fits(req, admitted):
                    break
                admitted.append(self._queue.popleft())
            return admitted

    def _fits(self, req: _Request, admitted: list[_Request]) -> bool:
        """Whether ``req`` may join the batch now (with ``admitted``, taken this round): fewer than
        ``max_batch`` rows, and the batch with it, padded to the longest row, keeps room for the next
        decode step within ``max_batch_tokens``. Alone it always fits, even larger than the budget."""
        rows = len(self._rows) + len(admitted)
        if rows == 0:
            return True
        if not self.batched or rows >= self.max_batch:
            return False
        width = max([req.length, self._width()] + [r.length for r in admitted])
        return (rows + 1) * (width + 1) <= self.max_batch_tokens

    def _width(self) -> int:
        """The batch's padded length (0 without a batch)."""
        return 0 if self._mask is None else self._mask.shape[1]

    def _sample_alone(self, req: _Request) -> None:
        try:
            draw = sample(self.model, req.prompt, req.max_new, set(req.stop_ids), req.generator,
                          temperature=req.temperature, top_k=req.top_k, top_p=req.top_p,
                          repetition_penalty=req.repetition_penalty)
        except cancel.Interrupted:
            req.fail(cancel.Interrupted("interrupted"))
        except Exception as e:  # noqa: BLE001
            log.exception("model %s: generation failed", self.name)
            req.fail(_failed(self.name, "generation", e))
        else:
            req.ids, req.logprobs, req.stopped = draw.ids, draw.logprobs, draw.stopped
            self.stats["tokens"] += len(draw.ids)
            req.done.set()

    def _admit(self, group: list[_Request]) -> None:
        """Prefill one context (shared by ``group``: the same prompt, and the same ids drawn before a
        preemption), draw each request's next token from its last logits, join the batch. A failure
        fails this group's requests only (ModelError naming the prefill); the batch goes on."""
        group = [r for r in group if not r.abandoned]
        if not group:
            return
        context = group[0].context()
        try:
            from transformers import DynamicCache

            cache = DynamicCache()
            start, layers = self._prefixes.longest(context)
            if layers:  # a cached prefix (the conversation so far, the system prompt, a preempted row): the rest
                for i, (k, v) in enumerate(layers):
                    cache.update(k[:, :, :start], v[:, :, :start], i)
                self.stats["prefix_hits"] += 1
                self.stats["prefix_tokens"] += start
            ids = torch.tensor([context[start:]], dtype=torch.long, device=self.device)
            out = self.model(input_ids=ids, past_key_values=cache, use_cache=True, **last_logits_kwargs(self.model))
            self.stats["prefills"] += 1
            self.stats["prefill_tokens"] += len(context) - start
            self.stats["shared_prefills"] += len(group) - 1
            if any(r.ids for r in group):  # preempted: this prefill computes again what its rows had cached
                self.stats["recomputed_tokens"] += len(context) - start
            logits = out.logits[:1, -1].float()
            del out
            joining = []
            seen = None
            for req in group:
                if req.penalised:
                    if seen is None:
                        seen = torch.tensor(context, dtype=torch.long, device=self.device)
                    req.seen = seen
            picks = pick_tokens(logits.expand(len(group), -1), group)
            for req, (tok, lp) in zip(group, picks):
                if not self._record(req, tok, lp):
                    joining.append(req)
            if joining:
                self._join(cache, joining, len(context))
        except Exception as e:  # noqa: BLE001 - only this context's requests fail; the batch goes on
            log.exception("model %s: prefill of a %d-token prompt failed", self.name, len(context))
            for req in group:
                req.fail(_failed(self.name, f"the prefill of a {len(context)}-token prompt", e))

    def _record(self, req: _Request, tok: int, lp: float, signal: bool = True) -> bool:
        """Append a drawn token; True when the sequence is done (stop id or max_new_tokens). Its
        caller is woken here unless ``signal`` is false (then the caller of ``_record`` does it)."""
        req.ids.append(tok)
        req.logprobs.append(lp)
        self.stats["tokens"] += 1
        if tok in req.stop_ids:
            req.stopped = True
        elif len(req.ids) < req.max_new:
            if req.penalised:
                req.seen = torch.cat([req.seen, torch.tensor([tok], dtype=torch.long, device=self.device)])
            return False
        if signal:
            req.done.set()
        return True

    def _join(self, cache: Any, reqs: list[_Request], length: int) -> None:
        """Add ``reqs`` (one prefilled prompt of ``length`` tokens in ``cache``) to the batch."""
        n = len(reqs)
        layers = [(layer.keys, layer.values) for layer in cache.layers]
        if n > 1:
            layers = [(k.repeat(n, 1, 1, 1), v.repeat(n, 1, 1, 1)) for k, v in layers]
        new_mask = torch.ones(n, length, dtype=torch.long, device=self.device)
        if self._rows:
            width = self._mask.shape[1]
            total = max(width, length)

            def left(x: torch.Tensor, have: int) -> torch.Tensor:
                return torch.nn.functional.pad(x, (0, 0, total - have, 0)) if total > have else x

            merged = [(torch.cat([left(old.keys, width), left(k, length)]),
                       torch.cat([left(old.values, width), left(v, length)]))
                      for old, (k, v) in zip(self._cache.layers, layers)]
            mask = torch.cat([torch.nn.functional.pad(self._mask, (total - width, 0)),
                              torch.nn.functional.pad(new_mask, (total - length, 0))])
            target = self._cache
        else:
            merged, mask, target = layers, new_mask, cache
        for layer, (k, v) in zip(target.layers, merged):  # assigned only once everything was computed
            layer.keys, layer.values = k, v
        self._cache, self._mask = _growing(target), mask
        for req in reqs:
            req.pos = length
            self._joins += 1
            req.admitted = self._joins
        self._rows.extend(reqs)

    def _step(self) -> None:
        """Make room (:meth:`_make_room`); feed every sequence its last token; draw the next one; let
        finished sequences go."""
        self._make_room()
        rows = self._rows
        n = len(rows)
        inputs = torch.tensor([[r.ids[-1]] for r in rows], dtype=torch.long, device=self.device)
        positions = torch.tensor([[r.pos] for r in rows], dtype=torch.long, device=self.device)
        mask = torch.cat([self._mask, torch.ones(n, 1, dtype=self._mask.dtype, device=self.device)], dim=1)
        out = self.model(input_ids=inputs, attention_mask=mask, position_ids=positions,
                         past_key_values=self._cache, use_cache=True)
        self._mask = mask
        logits = out.logits[:, -1].float()
        del out
        self.stats["steps"] += 1
        self.stats["rows_stepped"] += n
        self.stats["max_rows"] = max(self.stats["max_rows"], n)
        self.stats["max_positions"] = max(self.stats["max_positions"], n * mask.shape[1])
        for req in rows:
            req.pos += 1
        live = [i for i, req in enumerate(rows) if not req.abandoned]
        picks = pick_tokens(logits if len(live) == n else logits[live], [rows[i] for i in live])
        for i, (tok, lp) in zip(live, picks):
            req = rows[i]
            if self._record(req, tok, lp, signal=False):
                if self._prefixes.budget:
                    self._keep(i, req)  # kept before its caller wakes: its next turn finds it
                req.done.set()
        self._drop(lambda r: r.done.is_set() or r.abandoned)

    def _make_room(self) -> None:
        """Preempt rows, most recently admitted first, until the next decode step's cache (rows x
        (padded length + 1)) fits ``max_batch_tokens``; one row always stays (alone it may be larger).
        The padded length left is the longest remaining row, the columns :meth:`_drop` keeps."""
        stay = sorted(self._rows, key=lambda r: r.admitted)
        width = self._width()
        leave: list[_Request] = []
        while len(stay) > 1 and len(stay) * (width + 1) > self.max_batch_tokens:
            leave.append(stay.pop())
            width = max(r.pos for r in stay)
        if leave:
            self._preempt(leave)

    def _preempt(self, leave: list[_Request]) -> None:
        """Take the rows ``leave`` (most recently admitted first) out of the batch and put them back at
        the front of the queue, the earliest admitted first; their caches go to the prefix store, if any."""
        if self._prefixes.budget:
            for req in leave:
                self._keep(self._rows.index(req), req)
        going = {id(r) for r in leave}
        self._drop(lambda r: id(r) in going)
        for req in leave:
            req.pos = 0
        with self._cond:
            closed = self._closed
            if not closed:  # (close() already failed the queue it emptied: these would wait for nothing)
                self._queue.extendleft(leave)  # most recent first, so the earliest admitted ends at the front
        if closed:
            for req in leave:
                req.fail(_closed_error(self.name))
        self.stats["preemptions"] += len(leave)

    def _keep(self, row: int, req: _Request) -> None:
        """Put a finished or preempted row's cache (its prompt and every drawn id but the last, which
        was never fed) into the prefix store; its real positions are the row's last ``pos`` columns."""
        n = req.pos
        if n != len(req.prompt) + len(req.ids) - 1:
            return
        layers = [(layer.keys[row:row + 1, :, -n:].clone(), layer.values[row:row + 1, :, -n:].clone())
                  for layer in self._cache.layers]
        self._prefixes.put(req.prompt + req.ids[:-1], layers)

    def _drop(self, leaves: Callable[[_Request], bool]) -> None:
        """Remove the rows for which ``leaves`` is true; cut the columns that only held padding."""
        keep = [i for i, r in enumerate(self._rows) if not leaves(r)]
        if len(keep) == len(self._rows):
            return
        self._rows = [self._rows[i] for i in keep]
        if not self._rows:
            self._cache = self._mask = None
            return
        index = torch.tensor(keep, dtype=torch.long, device=self.device)
        cut = self._mask.shape[1] - max(r.pos for r in self._rows)
        for layer in self._cache.layers:
            layer.keys = layer.keys[index, :, cut:]
            layer.values = layer.values[index, :, cut:]
        self._mask = self._mask[index, cut:]

    def _fail_rows(self, error: Callable[[str], BaseException]) -> None:
        for req in self._rows:
            req.fail(error(self.name))
        self._rows, self._cache, self._mask = [], None, None

    def _die(self, e: BaseException) -> None:
        """The worker hit something it cannot go on from: fail everyone, refuse new requests."""
        log.error("model %s: the batch engine's worker stopped (%s: %s)", self.name, type(e).__name__, e)
        with self._cond:
            self._broken = f"{type(e).__name__}: {e}"
            pending = list(self._queue)
            self._queue.clear()
        for req in pending + self._rows:
            req.fail(_failed(self.name, "the batch engine's worker", e))
        self._rows, self._cache, self._mask = [], None, None


def _growing(cache: Any) -> Any:
    """``cache`` (a DynamicCache) with layers that append into a buffer with room to grow, instead
    of transformers' ``torch.cat`` of the whole cache at every step (same values, less copying)."""
    from transformers.cache_utils import DynamicLayer

    global _GrowingLayer
    if _GrowingLayer is None:
        class _Growing(DynamicLayer):
            def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any):
                if not self.is_initialized or self.keys.numel() == 0:
                    return super().update(key_states, value_states, *args, **kwargs)
                have, new = self.keys.shape[-2], key_states.shape[-2]
                kbuf, vbuf = getattr(self, "_kbuf", None), getattr(self, "_vbuf", None)
                if (kbuf is None or kbuf.data_ptr() != self.keys.data_ptr() or kbuf.shape[0] != self.keys.shape[0]
                        or have + new > kbuf.shape[-2]):  # the batch changed or the buffer is full: a new one
                    room = have + new + max(32, (have + new) // 4)
                    b, h, _, d = self.keys.shape
                    kbuf = self.keys.new_empty(b, h, room, d)
                    vbuf = self.values.new_empty(b, h, room, self.values.shape[-1])
                    kbuf[:, :, :have] = self.keys
                    vbuf[:, :, :have] = self.values
                    self._kbuf, self._vbuf = kbuf, vbuf
                kbuf[:, :, have:have + new] = key_states
                vbuf[:, :, have:have + new] = value_states
                self.keys, self.values = kbuf[:, :, :have + new], vbuf[:, :, :have + new]
                return self.keys, self.values

        _GrowingLayer = _Growing
    for layer in cache.layers:
        if type(layer) is DynamicLayer:
            layer.__class__ = _GrowingLayer
    return cache


_GrowingLayer: Any = None


class _PrefixStore:
    """KV caches of finished sequences with their ids: least recently used out past ``budget`` bytes."""

    MIN_SHARED = 16   # a shorter shared prefix is prefilled again (not worth the copy)

    def __init__(self, budget: int):
        self.budget = budget
        self.used = 0
        self._entries: OrderedDict[int, tuple[np.ndarray, list[tuple[torch.Tensor, torch.Tensor]], int]] = OrderedDict()
        self._next = 0

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[tuple[int, ...]]:
        return [tuple(int(t) for t in ids) for ids, _, _ in self._entries.values()]

    def put(self, ids: list[int], layers: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        size = sum(k.numel() * k.element_size() + v.numel() * v.element_size() for k, v in layers)
        if size > self.budget:
            return
        arr = np.asarray(ids, dtype=np.int64)
        n = len(arr)
        for key in [k for k, (old, _, _) in self._entries.items()
                    if len(old) <= n and np.array_equal(arr[:len(old)], old)]:
            self._remove(key)  # the conversation went on: the longer one replaces it
        self._entries[self._next] = (arr, layers, size)
        self._next += 1
        self.used += size
        while self.used > self.budget:
            self._remove(next(iter(self._entries)))

    def longest(self, prompt: list[int]) -> tuple[int, list[tuple[torch.Tensor, torch.Tensor]] | None]:
        """The longest prefix ``prompt`` shares with a kept sequence, at most all but its last token
        (something must be prefilled for the next logits), and that sequence's layers; (0, None)
        when none shares ``MIN_SHARED`` tokens."""
        if not self._entries:
            return 0, None
        p = np.asarray(prompt, dtype=np.int64)
        cap = len(p) - 1
        best, best_key = 0, None
        for key, (ids, _, _) in self._entries.items():
            m = min(len(ids), cap)
            if m <= best:
                continue
            diff = np.flatnonzero(ids[:m] != p[:m])
            shared = int(diff[0]) if diff.size else m
            if shared > best:
                best, best_key = shared, key
        if best_key is None or best < self.MIN_SHARED:
            return 0, None
        self._entries.move_to_end(best_key)
        return best, self._entries[best_key][1]

    def clear(self) -> None:
        self._entries.clear()
        self.used = 0

    def _remove(self, key: int) -> None:
        self.used -= self._entries.pop(key)[2]


_LIVE: "weakref.WeakSet[BatchEngine]" = weakref.WeakSet()


@atexit.register
def _close_live_engines() -> None:
    """Stop every engine's worker before the interpreter finalises: a daemon thread still ticking then
    is ended by CPython inside torch's C++ frames, which aborts the process ("terminate called without
    an active exception", SIGABRT) after the command's work is done and its outputs written."""
    for engine in list(_LIVE):
        try:
            engine.close()
        except Exception:  # noqa: BLE001 - exiting: nothing to report to
            pass


def _work(ref: "weakref.ref[BatchEngine]") -> None:
    """The worker thread: it holds its engine only during a tick, so an engine nobody uses any
    more is garbage-collected (with its model) and the thread ends."""
    while True:
        engine = ref()
        if engine is None:
            return
        try:
            if not engine._tick():
                return
        except BaseException as e:  # noqa: BLE001 - a bug must not leave callers waiting forever
            engine._die(e)
            return
        finally:
            engine = None


def _by_context(requests: list[_Request]) -> list[list[_Request]]:
    """Requests grouped by identical context (prompt + ids drawn before a preemption), in queue order
    of each group's first request: a group is prefilled once."""
    groups: dict[tuple[int, ...], list[_Request]] = {}
    for req in requests:
        groups.setdefault(tuple(req.context()), []).append(req)
    return list(groups.values())


def _batchable(model: Any) -> bool:
    """True when every attention layer keeps a plain key/value cache that can be padded and merged."""
    types = getattr(getattr(model, "config", None), "layer_types", None)
    return not types or set(types) <= BATCHABLE_LAYER_TYPES


def _closed_error(name: str) -> ModelError:
    return ModelError(f"model '{name}': the batch engine was closed", "load the model again")


def _failed(name: str, what: str, e: BaseException) -> ModelError:
    err = ModelError(f"model '{name}': {what} failed ({type(e).__name__}: {' '.join(str(e).split())[:300]})",
                     "see the log for the traceback")
    err.__cause__ = e
    return err

"""A local transformers model (CPU or GPU) behind the ChatModel interface, for small models and RL.

    model = LocalHFModel.load("data/models/tiny", seed=0)
    result = model.chat(messages, tools=TOOLS, sampling=Sampling(temperature=0.7, max_tokens=256))
    result.prompt_ids, result.completion_ids, result.logprobs   # exactly what was sampled

The prompt is rendered by the tokenizer's chat template; tool calls are parsed by the tokenizer's
response template (TRL's ``add_response_schema`` provides it for the templates TRL knows, e.g. Qwen3)
with the prompt ids as ``prefix=``: without the prefix transformers >= 5.13 silently finds no tool
calls. When parsing fails the decoded text stays the message content.

Concurrent calls from many threads are decoded together by one
:class:`~lis.models.batch_engine.BatchEngine`; :meth:`LocalHFModel.generate_ids` is the token-level
entry (prompt ids in, :class:`~lis.models.sampler.Draw` out) for token-exact rollouts.
"""
from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from lis.models.base import ChatResult, ContextLengthError, ModelError, Sampling, Usage
from lis.models.lockstep import Lockstep
from lis.util.text import safe_result
from lis.models.toolcalls import arguments_as_dicts, normalize_tool_calls

if TYPE_CHECKING:
    from lis.models.batch_engine import BatchEngine
    from lis.models.sampler import Draw

log = logging.getLogger("lis.models.local")

DEFAULT_MAX_TOKENS = 1024


def resolve_device(device: str | None) -> str:
    """``auto``/None → ``cuda`` when available, else ``cpu``; anything else is returned as given."""
    import torch

    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


class LocalHFModel:
    """A causal LM and its tokenizer, sampled token by token (see :mod:`lis.models.sampler`).

    ``seed`` seeds the model's own generator, used by calls whose sampling has no seed (a fixed
    sequence of calls gives a fixed sequence of outputs); a call with ``Sampling.seed`` uses a fresh
    generator seeded with it. Sampling: the call's settings, else ``sampling`` (the params entry),
    else the model's generation config (as vLLM does), else temperature 1 without truncation.
    ``max_tokens`` defaults to 1024 and is cut to the room left in ``max_context``.

    Generation goes through a :class:`~lis.models.batch_engine.BatchEngine` (started on first use)
    with ``max_batch``, ``max_batch_tokens`` and ``prefix_cache_mb`` (None: the engine's defaults).
    """

    def __init__(self, model: Any, tokenizer: Any, name: str = "local", sampling: Sampling | None = None,
                 seed: int | None = None, max_context: int | None = None, max_batch: int = 64,
                 max_batch_tokens: int | None = None, prefix_cache_mb: float | None = None):
        import torch

        self.name = name
        self.model = model  # its mode is the caller's (load() puts it in eval mode; GRPO switches a training
        # model to eval while its episodes generate and back after: wrapping must not change it)
        self.tokenizer = tokenizer
        self.sampling = sampling or Sampling()
        self.generation_defaults = _generation_defaults(model)
        self.max_context = max_context or _context_length(model, tokenizer)
        self.stop_ids = _stop_ids(model, tokenizer)
        self.can_parse = _ensure_response_parser(tokenizer)
        self._generator = torch.Generator().manual_seed(seed if seed is not None else secrets.randbits(63))
        self.max_batch = max_batch
        self.max_batch_tokens = max_batch_tokens
        self.prefix_cache_mb = prefix_cache_mb
        self._engine: BatchEngine | None = None
        self._engine_lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path, name: str | None = None, device: str | None = "auto", dtype: str = "auto",
             key: str = "path", **kwargs: Any) -> "LocalHFModel":
        """Load model and tokenizer from a local folder (a folder path never reaches the hub). ``key``: the
        key of the models entry that named the folder (what a missing folder's hint says to fix).

        Raises ModelError when the folder is missing or does not hold a loadable model.
        """
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # a per-load progress bar only clutters the stage logs
        folder = Path(path).expanduser()
        label = name or folder.name
        if not (folder / "config.json").is_file():
            raise ModelError(f"model '{label}': no model folder at {folder} (config.json missing)",
                             f"build it first (`make paper` builds every model trained here, `lis train <stage>` "
                             f"one of them) or fix models.{label}.{key}")
        device = resolve_device(device)
        if dtype == "auto":
            bf16 = device.startswith("cuda") and torch.cuda.is_bf16_supported()
            torch_dtype = torch.bfloat16 if bf16 else torch.float32
        else:
            torch_dtype = getattr(torch, dtype)
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder)
            model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch_dtype).to(device).eval()
        except (OSError, ValueError) as e:
            raise ModelError(f"model '{label}': cannot load {folder} ({' '.join(str(e).split())[:200]})",
                             "check that the folder holds a transformers model and tokenizer") from None
        return cls(model, tokenizer, name=label, **kwargs)

    # -- the interface -----------------------------------------------------------------------
    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> list[int]:
        """Prompt ids: the chat template over ``messages`` and ``tools`` with the generation prompt."""
        return render_ids(self.tokenizer, messages, tools)

    @property
    def engine(self) -> "BatchEngine":
        """The batching engine every generation goes through (started on first use)."""
        with self._engine_lock:
            if self._engine is None:
                # lazy: loads torch (batch_engine imports it); this module is imported without torch
                from lis.models.batch_engine import DEFAULT_MAX_BATCH_TOKENS, DEFAULT_PREFIX_CACHE_MB, BatchEngine

                self._engine = BatchEngine(
                    self.model, self.stop_ids, max_batch=self.max_batch, name=self.name,
                    max_batch_tokens=self.max_batch_tokens or DEFAULT_MAX_BATCH_TOKENS,
                    prefix_cache_mb=DEFAULT_PREFIX_CACHE_MB if self.prefix_cache_mb is None else self.prefix_cache_mb)
            return self._engine

    def use_engine(self, engine: Any) -> None:
        """Generate through ``engine`` instead of the in-process one (an object with the
        :class:`~lis.models.batch_engine.BatchEngine` ``generate`` signature, e.g. a
        :class:`~lis.models.vllm_tokens.VLLMTokenEngine`); the template, stop ids and parser stay this
        model's. The context limit becomes the engine's when it reports one."""
        with self._engine_lock:
            old, self._engine = self._engine, engine
        limit = getattr(engine, "max_model_len", None)
        limit = limit() if callable(limit) else limit
        if limit:
            self.max_context = min(self.max_context, int(limit))
        if old is not None and old is not engine:
            old.close()

    def wrap_engine(self, wrap: Any) -> None:
        """Put ``wrap(engine)`` in front of the current engine (started if need be), e.g. a rehearsal's
        scripted turns; the wrapped engine stays open behind it."""
        inner = self.engine
        with self._engine_lock:
            self._engine = wrap(inner)

    @contextlib.contextmanager
    def lockstep(self, slots: int) -> Iterator[Any]:
        """Generate in rounds formed by rule for the duration (the deterministic rollout mode):
        the engine goes behind a :class:`~lis.models.lockstep.Lockstep` of ``slots`` slots, and every
        generation must come from a thread inside ``with step.slot(i)``. ModelError when the engine
        cannot queue a round in one go (a vLLM server)."""
        inner = self.engine
        step = Lockstep(inner, slots, name=self.name)
        with self._engine_lock:
            self._engine = step
        try:
            yield step
        finally:
            with self._engine_lock:
                if self._engine is step:
                    self._engine = inner

    def weights_changed(self) -> None:
        """The model was trained in place: the engine forgets the caches it kept of earlier turns."""
        with self._engine_lock:
            engine = self._engine
        forget = getattr(engine, "forget_prefixes", None)
        if forget is not None:
            forget()

    def close(self) -> None:
        """Stop the engine's worker thread (it also ends by itself once the model is dropped)."""
        with self._engine_lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()

    def resolve_sampling(self, sampling: Sampling | None = None) -> Sampling:
        """The settings a call uses: the call's, else the params entry's, else the generation config's."""
        return self.generation_defaults.override(self.sampling).override(sampling)

    def generate_ids(self, prompt_ids: list[int], max_new_tokens: int, sampling: Sampling | None = None) -> "Draw":
        """Up to ``max_new_tokens`` tokens after ``prompt_ids`` (batched with concurrent calls), cut to
        the room left in the context; sampling as in :meth:`chat` (its ``max_tokens`` unused). Raises
        ContextLengthError when the prompt fills the context, ModelError when generation fails."""
        return self._draw(list(prompt_ids), max_new_tokens, self.resolve_sampling(sampling))

    def _draw(self, prompt_ids: list[int], max_new_tokens: int, s: Sampling) -> "Draw":
        room = self.max_context - len(prompt_ids)
        if room <= 0:
            raise ContextLengthError(f"model '{self.name}': prompt of {len(prompt_ids)} tokens fills its context of "
                                     f"{self.max_context}", "shorten the conversation",
                                     limit=self.max_context, requested=len(prompt_ids),
                                     prompt_tokens=len(prompt_ids))
        return self.engine.generate(prompt_ids, max(0, min(int(max_new_tokens), room)),
                                    temperature=1.0 if s.temperature is None else s.temperature,
                                    top_k=s.top_k, top_p=s.top_p, repetition_penalty=s.repetition_penalty,
                                    seed=s.seed, generator=self._generator)

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             sampling: Sampling | None = None) -> ChatResult:
        """One assistant turn. Raises ContextLengthError when the prompt leaves no room to generate."""
        s = self.resolve_sampling(sampling)
        t0 = time.perf_counter()
        prompt_ids = self.render(messages, tools)
        draw = self._draw(prompt_ids, s.max_tokens or DEFAULT_MAX_TOKENS, s)
        message = self.parse(draw.ids, prompt_ids, tools)
        finish = "tool_calls" if message.get("tool_calls") else ("stop" if draw.stopped else "length")
        # the ids stay exact; the text (and tool calls parsed from it) is made safe (lis.util.text)
        return safe_result(ChatResult(message=message, usage=Usage(len(prompt_ids), len(draw.ids), 0),
                                      latency_s=time.perf_counter() - t0, finish_reason=finish,
                                      prompt_ids=prompt_ids, completion_ids=draw.ids, logprobs=draw.logprobs))

    def parse(self, completion_ids: list[int], prompt_ids: list[int],
              tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The assistant message (OpenAI format) of sampled ids; plain text content when parsing fails."""
        text = self.tokenizer.decode(completion_ids, skip_special_tokens=True)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if not self.can_parse:
            return message
        try:
            parsed = self.tokenizer.parse_response(completion_ids, prefix=prompt_ids, tools=tools or None)
        except Exception as e:  # noqa: BLE001 - the parser raises many types on malformed output
            log.debug("model %s: response not parsed (%s: %s)", self.name, type(e).__name__, e)
            return message
        if not isinstance(parsed, dict):
            return message
        calls = normalize_tool_calls(parsed.get("tool_calls"), salt=(len(prompt_ids), completion_ids))
        content = parsed.get("content")
        if isinstance(content, str) and self.tokenizer.eos_token:
            content = content.removesuffix(self.tokenizer.eos_token)
        message["content"] = content if content else (None if calls else "")
        if calls:
            message["tool_calls"] = calls
        reasoning = parsed.get("reasoning_content") or parsed.get("thinking")
        if isinstance(reasoning, str) and reasoning:
            message["reasoning_content"] = reasoning
        return message


def render_ids(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> list[int]:
    """Prompt ids of ``messages`` (and ``tools``) under ``tokenizer``'s chat template, with the
    generation prompt: what a local model is given (also before a model is loaded, e.g. to check
    training prompts against their budget)."""
    return list(tokenizer.apply_chat_template(arguments_as_dicts(messages), tools=tools or None,
                                              add_generation_prompt=True, tokenize=True, return_dict=False))


def _generation_defaults(model: Any) -> Sampling:
    """The sampling settings of the model's generation config (as vLLM applies them by default):
    temperature (0 when it says greedy), top_p, top_k, repetition_penalty."""
    cfg = getattr(model, "generation_config", None)
    if cfg is None:
        return Sampling()
    temperature = cfg.temperature if getattr(cfg, "do_sample", False) else 0.0
    return Sampling(temperature=temperature, top_p=cfg.top_p, top_k=cfg.top_k,
                    repetition_penalty=cfg.repetition_penalty)


def _context_length(model: Any, tokenizer: Any) -> int:
    limits = [getattr(model.config, "max_position_embeddings", None), getattr(tokenizer, "model_max_length", None)]
    limits = [int(n) for n in limits if isinstance(n, int) and 0 < n < 10**8]
    return min(limits) if limits else 4096


def _stop_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in (eos, tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    return ids


def _ensure_response_parser(tokenizer: Any) -> bool:
    """Give the tokenizer TRL's response template if it has none; False when none is known."""
    if getattr(tokenizer, "response_template", None) is not None or getattr(tokenizer, "response_schema", None):
        return True
    try:
        from trl.chat_template_utils import add_response_schema

        add_response_schema(tokenizer)
    except ValueError:
        log.info("no response parser for this chat template: tool calls stay in the text")
        return False
    return True

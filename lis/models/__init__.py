"""Model backends behind one interface (:class:`ChatModel`): messages + tools + sampling → one turn.

    from lis.models import build_model
    model = build_model("sft", {"backend": "local", "path": "data/models/sft"})   # params: models.<name>
    result = model.chat(messages, tools=TOOLS)

Backends: :class:`OpenAIChatModel` (vLLM, SGLang, ``transformers serve``, API providers),
:class:`LocalHFModel` (transformers on CPU/GPU; exact sampled ids and log-probs for RL),
:class:`ScriptedModel` (replays given replies; tests). :class:`ChatServer` serves any of them
over OpenAI-compatible HTTP. Token-level generation for RL: :class:`BatchEngine` (batched local
transformers) and :class:`VLLMTokenEngine` (a vLLM server), one ``generate`` API.
Heavy dependencies (torch, transformers, openai) load only when a backend is used.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from lis.models.base import ChatModel, ChatResult, ContextLengthError, ModelError, Sampling, Usage
from lis.models.scripted import ScriptedModel
from lis.util.lazy import lazy_exports

__all__ = ["BatchEngine", "ChatModel", "ChatResult", "ChatServer", "ContextLengthError", "LocalHFModel", "ModelError",
           "OpenAIChatModel", "Sampling", "ScriptedModel", "Usage", "VLLMTokenEngine", "build_model"]

if TYPE_CHECKING:  # the names below load on first use (lis.util.lazy)
    from lis.models.batch_engine import BatchEngine
    from lis.models.local_hf import LocalHFModel
    from lis.models.openai_compat import OpenAIChatModel
    from lis.models.registry import build_model
    from lis.models.server import ChatServer
    from lis.models.vllm_tokens import VLLMTokenEngine

_LAZY = {
    "BatchEngine": "lis.models.batch_engine",
    "ChatServer": "lis.models.server",
    "LocalHFModel": "lis.models.local_hf",
    "OpenAIChatModel": "lis.models.openai_compat",
    "VLLMTokenEngine": "lis.models.vllm_tokens",
    "build_model": "lis.models.registry",
}
__getattr__ = lazy_exports(__name__, _LAZY)[0]

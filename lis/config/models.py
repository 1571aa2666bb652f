"""The ``models`` section: one entry per model a job may name (lis.models.registry builds it;
it also refuses keys that do not apply to the entry's backend, which the schema cannot say)."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from lis.config.base import NonNegFloat, NonNegInt, PosFloat, PosInt, Section

ModelName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]


class ServeSpec(Section):
    """How an openai entry's server starts (lis/models/serve_plan.py)."""

    auto: bool = False
    """true: stages start it when its health URL does not answer"""
    command: Annotated[list[str | float], Field(min_length=1)] | None = None
    """any program (else vllm serve)"""
    health_url: str | None = None
    """default: <base_url>/models for a command, the server root's /health for vLLM"""
    startup_timeout_s: PosFloat = 1800.0
    """how long the server may take to answer its health URL"""
    linger_s: NonNegFloat = 0.0
    """after its last job ends, how long the server stays up for the model's next job (0: stop it at once)"""
    env: dict[str, str | float] = {}
    model: str | None = None
    """the weights vLLM loads (default: the entry's model)"""
    tool_call_parser: str | None = None
    reasoning_parser: str | None = None
    tensor_parallel_size: PosInt | None = None
    max_model_len: PosInt | None = None
    enable_prefix_caching: bool | None = None
    host: str | None = None
    port: Annotated[int, Field(ge=1, le=65535)] | None = None
    extra_args: list[str] = []


class SamplingSpec(Section):
    temperature: NonNegFloat | None = None
    top_p: Annotated[float, Field(gt=0, le=1)] | None = None
    top_k: int | None = None
    repetition_penalty: PosFloat | None = None
    max_tokens: PosInt | None = None
    seed: int | None = None
    extra_body: dict[str, Any] = {}
    """other server parameters, passed as they are"""


class ModelEntry(Section):
    backend: Literal["openai", "local", "scripted"]
    model: str | None = None
    """openai: the served model name; local: the weights folder"""
    base_url: str | None = None
    api_key_env: str | None = None
    path: str | None = None
    device: str | None = None
    dtype: str | None = None
    seed: int | None = None
    max_context: Annotated[int, Field(ge=64)] | None = None
    max_batch: PosInt | None = None
    """local: sequences the batch engine decodes together at most (default 64)"""
    max_batch_tokens: PosInt | None = None
    """local: the KV-cache budget of one batch, in tokens"""
    prefix_cache_mb: NonNegFloat | None = None
    """local: memory for the prefix cache of finished sequences (0 or absent: none)"""
    timeout_s: PosFloat | None = None
    max_retries: NonNegInt | None = None
    backoff_s: NonNegFloat | None = None
    max_reply_bytes: PosInt | None = None
    """openai: a reply body past this is not read (cut)"""
    replies: list[Any] | None = None
    """scripted: the replies, in order"""
    serve: ServeSpec = None  # type: ignore[assignment]  # optional, not nullable: absent is not served
    sampling: SamplingSpec = None  # type: ignore[assignment]  # absent: the backend's defaults

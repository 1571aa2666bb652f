"""Build a ChatModel from its params entry (``models.<name>`` in params.yaml).

    build_model("qwen3-4b", {"backend": "openai", "model": "Qwen/Qwen3-4B-Instruct-2507",
                             "base_url": "http://localhost:8000/v1",
                             "sampling": {"temperature": 0.7, "top_p": 0.8, "top_k": 20}})
    build_model("sft", {"backend": "local", "model": "data/models/sft", "seed": 0})

Backends: ``openai`` (any OpenAI-compatible server or API), ``local`` (a transformers folder, run by
the batching engine; the offline tiny models the pipeline trains are local folders too) and
``scripted`` (replays ``replies``; tests). Keys that do not apply to the backend are errors, not ignored.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lis.config.models import SamplingSpec
from lis.models.base import ChatModel, ModelError, Sampling
from lis.models.local_hf import LocalHFModel
from lis.models.scripted import ScriptedModel
from lis.params import pydantic_problem

BACKENDS = ("openai", "local", "scripted")
COMMON_KEYS = {"backend", "sampling"}
BACKEND_KEYS = {
    "openai": {"model", "base_url", "api_key_env", "timeout_s", "max_retries", "backoff_s", "max_reply_bytes", "serve"},
    "local": {"model", "path", "device", "dtype", "seed", "max_context", "max_batch", "max_batch_tokens",
              "prefix_cache_mb"},
    "scripted": {"replies"},
}


def sampling_from(name: str, values: dict[str, Any] | None) -> Sampling:
    """``Sampling`` from a params dict, checked by its model (:class:`lis.config.models.SamplingSpec`).
    Raises ModelError naming an unknown key or a bad value."""
    try:
        checked = SamplingSpec.model_validate(dict(values or {}))
    except ValidationError as e:
        raise ModelError(pydantic_problem(e, f"models.{name}.sampling"),
                         f"use {', '.join(SamplingSpec.model_fields)}; other server parameters go in extra_body") from None
    return Sampling(**checked.model_dump(exclude_unset=True))


def build_model(name: str, spec: dict[str, Any]) -> ChatModel:
    """The ChatModel that ``spec`` describes. Raises ModelError for an unknown backend or key, or a
    missing local folder."""
    backend = spec.get("backend")
    if backend not in BACKENDS:
        raise ModelError(f"models.{name}: unknown backend {backend!r}", f"use one of {', '.join(BACKENDS)}")
    allowed = COMMON_KEYS | BACKEND_KEYS[backend]
    # a key set to null is unset (an overlay turning a local entry into a served one says `path: null`)
    spec = {k: v for k, v in spec.items() if v is not None or k in allowed}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise ModelError(f"models.{name}: key(s) {', '.join(unknown)} do not apply to backend {backend}",
                         f"a {backend} entry takes {', '.join(sorted(allowed))}")
    sampling = sampling_from(name, spec.get("sampling"))
    if backend == "openai":
        # lazy: loads the openai SDK (~1.5 s); the registry is imported by light paths (lis --help)
        from lis.models.openai_compat import MAX_REPLY_BYTES, OpenAIChatModel

        return OpenAIChatModel(name, model=spec.get("model"), base_url=spec.get("base_url"),
                               api_key_env=spec.get("api_key_env", "OPENAI_API_KEY"), sampling=sampling,
                               timeout_s=float(spec.get("timeout_s", 1200)),
                               max_retries=int(spec.get("max_retries", 5)),
                               backoff_s=None if spec.get("backoff_s") is None else float(spec["backoff_s"]),
                               max_reply_bytes=int(spec.get("max_reply_bytes", MAX_REPLY_BYTES)))
    if backend == "scripted":
        return ScriptedModel(list(spec.get("replies") or []), name=name)
    path = spec.get("path") or spec.get("model")
    if not path:
        raise ModelError(f"models.{name}: a local model needs `model` (or `path`): its folder",
                         f"set models.{name}.model to a transformers model folder")
    return LocalHFModel.load(Path(path), name=name, key="path" if spec.get("path") else "model",
                             device=spec.get("device", "auto"), dtype=spec.get("dtype", "auto"),
                             sampling=sampling, seed=spec.get("seed"), max_context=spec.get("max_context"),
                             max_batch=int(spec.get("max_batch", 64)), max_batch_tokens=spec.get("max_batch_tokens"),
                             prefix_cache_mb=spec.get("prefix_cache_mb"))


def fingerprint(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """What identifies the model's behaviour beyond its params entry, for caches of results: openai,
    the served name and endpoint; local, the weights hash of the folder's manifest.json, else the
    weight files' names, sizes and modification times (hashing GBs per job would be too slow)."""
    import json

    backend = spec.get("backend")
    if backend == "openai":
        return {"model": spec.get("model"), "base_url": spec.get("base_url")}
    if backend == "scripted":
        return {"replies": len(spec.get("replies") or [])}
    path = Path(spec.get("path") or spec.get("model") or "")
    try:
        manifest = json.loads((path / "manifest.json").read_text())
        if manifest.get("weights_sha256"):
            return {"weights_sha256": manifest["weights_sha256"]}
    except (OSError, ValueError):
        pass
    files = sorted(p for p in path.glob("*") if p.suffix in (".safetensors", ".bin", ".json")) if path.is_dir() else []
    return {"files": [(p.name, p.stat().st_size, int(p.stat().st_mtime)) for p in files]}

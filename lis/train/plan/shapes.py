"""The shape of a Qwen3 model from its ``config.json``: parameter counts and which model a plan is for.

    shape = ModelShape.from_config(read_config("data/model_configs/qwen3-4b-instruct-2507.json"))
    shape.params            # every parameter, as model.parameters() counts them
    shape, source = resolve_model(params, "grpo", None)   # the stage's start model (params `base`)

No weights are read and no model is built, so a plan of any model is instant on any machine.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lis import layout
from lis.errors import LisError
from lis.offline.base import DEFAULT_ARCH
from lis.offline.random_model import read_config
from lis.offline.tokenizer import ADDED_TOKENS

CONFIGS_DIR = Path(layout.MODEL_CONFIGS_DIR)
# Bounds of a plausible decoder's sizes: each well above any published model's.
SHAPE_LIMITS = {"hidden_size": 1 << 17, "intermediate_size": 1 << 20, "num_hidden_layers": 4096,
                "num_attention_heads": 4096, "num_key_value_heads": 4096, "vocab_size": 1 << 24, "head_dim": 4096}
LINEAR_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class ModelShape:
    """What memory depends on: Qwen3's hidden, intermediate and vocabulary sizes, layers and heads."""

    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool
    name: str = ""

    @classmethod
    def from_config(cls, cfg: dict[str, Any], name: str = "") -> "ModelShape":
        """The shape of a Qwen3 ``config.json``; LisError (naming the key) on a size that is not a positive
        integer within :data:`SHAPE_LIMITS`, or heads that the KV heads do not divide."""
        where = f" of {name}" if name else ""
        size = {key: _size(cfg, key, where) for key in SHAPE_LIMITS if key != "head_dim"}
        hidden, heads, kv_heads = size["hidden_size"], size["num_attention_heads"], size["num_key_value_heads"]
        if cfg.get("head_dim") is None and hidden % heads:
            raise LisError(f"hidden_size{where} ({hidden}) is not a multiple of num_attention_heads ({heads}) "
                           "and no head_dim is given", "set head_dim, or a hidden_size that the heads divide")
        head_dim = _size(cfg, "head_dim", where) if cfg.get("head_dim") is not None else hidden // heads
        if heads % kv_heads:
            raise LisError(f"num_key_value_heads{where} ({kv_heads}) does not divide num_attention_heads ({heads})",
                           "grouped-query attention shares each KV head among a whole number of heads")
        tied = cfg.get("tie_word_embeddings", True)
        if not isinstance(tied, bool):
            raise LisError(f"tie_word_embeddings{where} is {tied!r}, not true or false", "set it to true or false")
        return cls(hidden=hidden, intermediate=size["intermediate_size"], layers=size["num_hidden_layers"],
                   heads=heads, kv_heads=kv_heads, head_dim=head_dim, vocab=size["vocab_size"], tied=tied, name=name)

    @property
    def q(self) -> int:
        """Width of the queries (and of the attention output): heads × head_dim."""
        return self.heads * self.head_dim

    @property
    def kv(self) -> int:
        """Width of the keys (and values): kv_heads × head_dim (grouped-query attention)."""
        return self.kv_heads * self.head_dim

    def linear_shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) features of each linear module of a decoder layer."""
        h, i = self.hidden, self.intermediate
        return {"q_proj": (h, self.q), "k_proj": (h, self.kv), "v_proj": (h, self.kv), "o_proj": (self.q, h),
                "gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)}

    @property
    def layer_linear_params(self) -> int:
        """Weights of one decoder layer's seven linear modules (no biases: attention_bias is false in Qwen3)."""
        return sum(a * b for a, b in self.linear_shapes().values())

    @property
    def layer_params(self) -> int:
        """One decoder layer: its linear modules, two RMSNorms over hidden, the q/k RMSNorms over head_dim."""
        return self.layer_linear_params + 2 * self.hidden + 2 * self.head_dim

    @property
    def embed_params(self) -> int:
        return self.vocab * self.hidden

    @property
    def head_params(self) -> int:
        """The output layer's own weights: 0 when tied to the embedding (Qwen3-4B's are)."""
        return 0 if self.tied else self.vocab * self.hidden

    @property
    def params(self) -> int:
        """Every parameter (a tied embedding counted once), as ``sum(p.numel() for p in model.parameters())``."""
        return self.embed_params + self.head_params + self.layers * self.layer_params + self.hidden

    def lora_params(self, rank: int, targets: list[str] | tuple[str, ...]) -> int:
        """Trainable parameters of LoRA adapters of ``rank`` on ``targets`` in every layer: r × (in + out) each."""
        shapes = self.linear_shapes()
        unknown = [t for t in targets if t not in shapes]
        if unknown:
            raise LisError(f"lora.target_modules names {', '.join(unknown)}, not a Qwen3 linear module",
                           f"use some of {', '.join(LINEAR_MODULES)}")
        return self.layers * sum(rank * (shapes[t][0] + shapes[t][1]) for t in targets)

    def kv_bytes_per_position(self, dtype_bytes: int) -> int:
        """Bytes of one token position of a KV cache: keys and values of every layer."""
        return 2 * self.layers * self.kv * dtype_bytes

    def describe(self) -> str:
        count = f"{self.params / 1e9:.2f} B" if self.params >= 1e9 else f"{self.params / 1e6:.2f} M"
        return (f"{self.name or 'qwen3'}: {count} params (hidden {self.hidden}, intermediate "
                f"{self.intermediate}, {self.layers} layers, {self.heads}/{self.kv_heads} heads x {self.head_dim}, "
                f"vocab {self.vocab}{', tied' if self.tied else ''})")


def _size(cfg: dict[str, Any], key: str, where: str) -> int:
    value = cfg.get(key)
    high = SHAPE_LIMITS[key]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= high:
        shown = repr(value) if not isinstance(value, int) or abs(value) < 10 ** 30 else f"a {len(str(abs(value)))}-digit number"
        raise LisError(f"{key}{where} is {shown}, not a whole number from 1 to {high:,}",
                       "fix the model configuration (config.json or base.tiny.arch)")
    return value


def read_shape(path: str | Path, name: str | None = None) -> ModelShape:
    """The shape in a config JSON or a model folder's ``config.json``; raises LisError when there is none,
    it is not JSON, or it is not a complete Qwen3 configuration."""
    p = Path(path)
    return ModelShape.from_config(read_config(p), name=name or (p.name if p.is_dir() else p.stem))


def resolve_model(params: Any, stage: str, model: str | None) -> tuple[ModelShape, str]:
    """The model a plan is for and where its shape came from. ``model``: a config JSON, a model folder, or a
    local ``models:`` entry; None: the stage's start model (params ``base``). LisError when none resolves."""
    root = Path(params.root)
    if model:
        p = Path(model)
        candidates = [p, root / p]
        for c in candidates:
            if c.is_file() or (c.is_dir() and (c / "config.json").is_file()):
                return read_shape(c), str(c)
        entry = (params.data.get("models") or {}).get(model)
        if isinstance(entry, dict):
            if entry.get("backend") != "local" or not entry.get("path"):
                raise LisError(f"models.{model} is a {entry.get('backend')} entry, not a local model folder",
                               "give --model a local entry, a model folder or a config JSON (data/model_configs/)")
            folder = root / entry["path"]
            if not (folder / "config.json").is_file():
                raise LisError(f"models.{model} has no config.json at {folder} (not built yet)",
                               "give --model a config JSON (data/model_configs/) or build the model first")
            return read_shape(folder, model), f"models.{model} ({folder})"
        raise LisError(f"--model {model}: no such file, model folder or models entry",
                       "give a config JSON (data/model_configs/), a folder holding config.json, or a models entry")
    base = params.settings("base")
    if base.source == "hub":
        hub = base.hub.model
        cfg = root / CONFIGS_DIR / f"{hub.rsplit('/', 1)[-1].lower()}.json"
        if not cfg.is_file():
            raise LisError(f"no shape for base.hub.model {hub!r} (looked for {cfg.relative_to(root)})",
                           f"add its config.json to {CONFIGS_DIR}/ or give --model")
        return read_shape(cfg), f"base.hub.model {hub} ({cfg.relative_to(root)})"
    if base.source == "tiny":
        # a row per token of the tiny tokenizer: its BPE vocabulary plus the tokens added after training
        cfg = {**DEFAULT_ARCH, **base.tiny.arch.model_dump(), "vocab_size": base.tiny.vocab_size + len(ADDED_TOKENS),
               "model_type": "qwen3", "tie_word_embeddings": True}
        return ModelShape.from_config(cfg, name="tiny"), "base.tiny.arch"
    if base.source == "path":  # the section's model refuses source path without a path
        return read_shape(root / base.path), f"base.path {base.path}"
    raise LisError(f"cannot tell the model of base.source {base.source!r}", "give --model")

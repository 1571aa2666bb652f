"""A random-init model of a published shape, with the offline tiny tokenizer: paper-scale rehearsals.

    build_random("data/models/qwen3-4b-random", "data/model_configs/qwen3-4b-instruct-2507.json",
                 tokenizer_dir="data/models/base", seed=0)

The weights of the paper's model are not reachable offline, but its shape is public
(``data/model_configs``). A model of that shape with random weights exercises the same memory,
kernels and code paths: what a rehearsal (``docs/training.md``, "Paper scale, rehearsed") needs.
The tokenizer and chat template are the tiny base's (offline); when the config's ``vocab_size`` is
larger than the tokenizer, ids past it decode to nothing, so memory and compute are the full
vocabulary's. The model's end-of-turn ids are the tokenizer's (``<|im_end|>`` and the pad id), so
the samplers stop where the chat template says a turn ends.
"""
from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.util.files import replace_dir

log = logging.getLogger("lis.offline.random_model")

ARCH_KEYS = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
             "head_dim", "vocab_size", "tie_word_embeddings", "rms_norm_eps", "rope_theta", "max_position_embeddings",
             "hidden_act", "attention_bias", "attention_dropout")


def read_config(path: str | Path) -> dict[str, Any]:
    """A model configuration file (``config.json`` of a model folder, or one of ``data/model_configs``)."""
    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    try:
        cfg = json.loads(p.read_text())
    except OSError:
        raise LisError(f"no model configuration at {p}", "give a config JSON (data/model_configs/) or a model "
                       "folder holding config.json") from None
    except json.JSONDecodeError as e:
        raise LisError(f"{p} is not valid JSON (line {e.lineno})", "fix the file") from None
    except (RecursionError, ValueError) as e:  # nested past the parser's depth; an integer of too many digits
        raise LisError(f"{p} cannot be read as a model configuration ({type(e).__name__})",
                       "give a Qwen3 config.json (data/model_configs/)") from None
    if not isinstance(cfg, dict) or cfg.get("model_type") != "qwen3":
        raise LisError(f"{p}: model_type is {cfg.get('model_type') if isinstance(cfg, dict) else None!r}, "
                       "not qwen3", "give a Qwen3 configuration (the paper's architecture)")
    missing = [k for k in ARCH_KEYS[:7] if k not in cfg]
    if missing:
        raise LisError(f"{p} lacks {', '.join(missing)}", "give a complete Qwen3 configuration")
    return cfg


def build_random(out_dir: str | Path, config: str | Path | dict[str, Any], *, tokenizer_dir: str | Path,
                 seed: int = 0, dtype: str = "float32", device: str = "cpu") -> dict[str, Any]:
    """Write a random-init Qwen3 of ``config``'s shape with ``tokenizer_dir``'s tokenizer to ``out_dir``."""
    import torch
    from transformers import AutoTokenizer, GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    cfg = dict(config) if isinstance(config, dict) else read_config(config)
    tok_dir = Path(tokenizer_dir)
    if not (tok_dir / "tokenizer.json").is_file() and not (tok_dir / "tokenizer_config.json").is_file():
        raise LisError(f"no tokenizer in {tok_dir}", "build the tiny base first (lis train base) and give its folder")
    tokenizer = AutoTokenizer.from_pretrained(tok_dir)
    vocab = max(int(cfg["vocab_size"]), len(tokenizer))
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    arch = {k: cfg[k] for k in ARCH_KEYS if k in cfg}
    arch["vocab_size"] = vocab
    config_obj = Qwen3Config(**arch, bos_token_id=None, eos_token_id=eos, pad_token_id=tokenizer.pad_token_id,
                             dtype=dtype)
    t0 = time.perf_counter()
    with torch.random.fork_rng(devices=[]), torch.device(device):
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config_obj).to(getattr(torch, dtype))
    model.generation_config = GenerationConfig(eos_token_id=[eos, tokenizer.pad_token_id],
                                               pad_token_id=tokenizer.pad_token_id, do_sample=True, temperature=1.0)
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        manifest = {"kind": "random", "config": {**arch, "dtype": dtype}, "seed": seed,
                    "params": sum(p.numel() for p in model.parameters()), "tokenizer_from": str(tok_dir),
                    "tokenizer_vocab": len(tokenizer), "wall_s": round(time.perf_counter() - t0, 2)}
        manifest["id"] = f"random-{seed}-" + "-".join(str(arch[k]) for k in ARCH_KEYS[:7])
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.info("random %s: %d parameters (vocab %d, tokenizer %d) in %s", cfg.get("model_type"), manifest["params"],
             vocab, len(tokenizer), out)
    return manifest

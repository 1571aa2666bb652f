"""The tiny offline base model: a byte-level BPE tokenizer trained here and a random-init Qwen3.

    build_base("data/models/base", seed=0)            # lis train base (the pipeline's `base` stage)

Offline and deterministic: the same arguments give the same files (weights hash included) on the
same software stack. The tokenizer: :mod:`lis.offline.tokenizer`. The model is a Qwen3 (by default
hidden 64, 2 layers) with random weights: it knows nothing; the ``sft`` stage teaches it the agent's
form, GRPO in the sandbox what works.
"""
from __future__ import annotations

import json
import logging
import platform
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from lis.agent.tools.schemas import TOOLS
from lis.errors import LisError
from lis.prompts import render_prompts
from lis.offline import tokenizer as tt
from lis.util.files import replace_dir, sha256_file
from lis.util.hashing import hash_obj

log = logging.getLogger("lis.offline.base")

BUILD_VERSION = 3          # in the manifest: raised when the build changes what it writes
THREADS = 1                # fixed, so float reductions (and the weights) are the same on every run
DEFAULT_ARCH = dict(hidden_size=64, intermediate_size=192, num_hidden_layers=2, num_attention_heads=2,
                    num_key_value_heads=1, head_dim=32)


def _corpus_conversations(seed: int, episodes: int, context_tasks: list) -> list[tuple[list, list | None]]:
    """(messages, tools) rendered into the tokenizer's corpus: scripted teacher episodes (simulated,
    no sandbox needed: only their text matters here) and the first turn of each context task."""
    # lazy: loads torch; importing this module does not
    from lis.offline.teacher import episodes as synth

    convs = [(ep.messages, ep.tools) for ep in synth.episodes(episodes, seed)]
    for task in context_tasks:
        for mode, tools in (("sandbox", TOOLS), ("vanilla", None)):
            convs.append((render_prompts(task, mode), tools))
    return convs


def build_base(out_dir: str | Path, *, seed: int = 0, vocab_size: int = 4096, max_context: int = 16384,
               arch: dict[str, int] | None = None, stdlib_files: int = 60, corpus_episodes: int = 1000,
               context_tasks: list | None = None) -> dict[str, Any]:
    """Build the tiny base model into ``out_dir`` (replaced atomically) and return its manifest."""
    import torch
    import transformers
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    arch = {**DEFAULT_ARCH, **(arch or {})}
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    t0 = time.perf_counter()
    try:
        files = tt.stdlib_files(stdlib_files)
        texts = tt.rendered_texts(_corpus_conversations(seed, corpus_episodes, context_tasks or []))
        tokenizer = tt.train_tokenizer(tt.corpus(files, texts), vocab_size, max_context)
        t_tok = time.perf_counter() - t0
        eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
        config = Qwen3Config(vocab_size=len(tokenizer), max_position_embeddings=max_context, tie_word_embeddings=True,
                             bos_token_id=None, eos_token_id=eos, pad_token_id=tokenizer.pad_token_id,
                             dtype="float32", **arch)
        with torch.random.fork_rng(devices=[]):  # seed the init without touching the caller's RNG
            torch.manual_seed(seed)
            model = Qwen3ForCausalLM(config)
        # Every end-of-turn id the model may emit; the samplers stop on any of them.
        model.generation_config = GenerationConfig(eos_token_id=[eos, tokenizer.pad_token_id],
                                                   pad_token_id=tokenizer.pad_token_id, do_sample=True,
                                                   temperature=1.0)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        try:
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
            manifest = {
                "kind": "base", "source": "tiny", "build_version": BUILD_VERSION, "seed": seed,
                "architecture": "Qwen3ForCausalLM", **arch, "max_context": max_context,
                "params": sum(p.numel() for p in model.parameters()), "vocab": len(tokenizer),
                "chat_template": f"trl/chat_templates/{tt.TEMPLATE_NAME}",
                "corpus": {"stdlib_files": len(files), "rendered_pieces": len(texts),
                           "teacher_episodes": corpus_episodes, "context_tasks": len(context_tasks or []),
                           "sha256": tt.corpus_sha256(files, texts)},
                "weights_sha256": sha256_file(tmp / "model.safetensors"),
                "tokenizer_sha256": sha256_file(tmp / "tokenizer.json"),
                "timings_s": {"tokenizer": round(t_tok, 2), "total": round(time.perf_counter() - t0, 2)},
                "versions": {"python": platform.python_version(), "torch": torch.__version__,
                             "transformers": transformers.__version__, "threads": THREADS},
            }
            manifest["id"] = hash_obj({k: manifest[k] for k in ("weights_sha256", "tokenizer_sha256")})
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
            replace_dir(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    finally:
        torch.set_num_threads(threads)
    log.info("base model: %d parameters, vocab %d, in %s (%.1f s)", manifest["params"], manifest["vocab"], out,
             manifest["timings_s"]["total"])
    return manifest


def fetch_hub_base(out_dir: str | Path, model: str, revision: str | None) -> dict[str, Any]:
    """A hub model (e.g. Qwen/Qwen3-4B-Instruct-2507) downloaded into ``out_dir`` at ``revision``
    (None: the current main, recorded). Raises LisError offline or when the hub refuses."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    out = Path(out_dir)
    try:
        folder = snapshot_download(model, revision=revision, local_dir=out)
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as e:
        raise LisError(f"cannot download {model}@{revision or 'main'} ({' '.join(str(e).split())[:200]})",
                       "check network access to the HuggingFace hub, or use base.source: path with a local "
                       "folder") from None
    manifest = {"kind": "base", "source": "hub", "model": model, "revision": revision,
                "resolved_commit": _snapshot_commit(Path(folder)), "path": str(out)}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def _snapshot_commit(folder: Path) -> str | None:
    meta = folder / ".cache" / "huggingface"
    for p in meta.rglob("*.metadata") if meta.is_dir() else []:
        first = p.read_text().splitlines()[:1]
        if first:
            return first[0].strip()
    return None


def copy_base(out_dir: str | Path, source: str | Path) -> dict[str, Any]:
    """A local model folder copied in as the base (``base.source: path``)."""
    src, out = Path(source), Path(out_dir)
    if not (src / "config.json").is_file():
        raise LisError(f"base.path {src} is not a transformers model folder (no config.json)",
                       "point base.path at a folder holding config.json, weights and the tokenizer")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    shutil.copytree(src, tmp, dirs_exist_ok=True)
    manifest = {"kind": "base", "source": "path", "path": str(src)}
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    replace_dir(tmp, out)
    return manifest

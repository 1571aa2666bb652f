"""Build the tiny offline model: a ~0.36 M-parameter Qwen3 that acts as a (very weak) sandbox agent.

    lis model tiny --out data/models/tiny          # or: build_tiny("data/models/tiny")
    lis model tiny --check                         # then run sample tasks in real sandboxes

Offline and deterministic: the same arguments give the same files (weights hash included) on
the same software stack (the warm-up runs on one CPU thread). Steps: scripted episodes under the
real prompts of every domain and mode (:mod:`lis.train.teacher.episodes`); a byte-level BPE
tokenizer trained on CPython stdlib sources + those episodes as the chat template renders them
(TRL's Qwen3-Instruct-2507 template; merges cross words, so the long prompts become short); a
random-init Qwen3 (hidden 64, 2 layers); a supervised warm-up with the loss on assistant turns
only; the rate of valid tool calls before and after it on held-out episodes. About 75 s on 2 CPU
cores, most of it the warm-up. ``manifest.json`` records the seed, steps, sizes, the training
data (and its hash: a build made from other prompts or samples is rebuilt), hashes and rates.
"""
from __future__ import annotations

import hashlib
import json
import logging
import platform
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lis.errors import LisError

log = logging.getLogger("lis.train.tiny.build")

BUILD_VERSION = 2          # bump when the recipe changes: cached builds are keyed by it (2: real prompts)
DEFAULT_SFT_STEPS = 1200
WARMUP_LR = 5e-3
WARMUP_BATCH = 4
VOCAB_SIZE = 4096
MAX_CONTEXT = 16384        # the real sandbox prompts are ~1-2.5 K tokens; a read document adds up to ~6 K
STDLIB_FILES = 60
TRAIN_EPISODES = 1000
EVAL_EPISODES = 12
BEFORE_TURNS = 8           # the random model's rate (always ~0): a few short samples suffice
AFTER_TURNS = 30
THREADS = 1                # fixed, so float reductions (and the weights) are the same on every run
# The paper's sampling for Qwen3 instruct models; the valid-call rate is also reported under it.
PAPER_SAMPLING = dict(temperature=0.7, top_p=0.8, top_k=20)
MODEL_CONFIG = dict(hidden_size=64, intermediate_size=192, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=16)


def default_path(seed: int = 0, sft_steps: int = DEFAULT_SFT_STEPS) -> Path:
    """The cache folder of the tiny model built with these arguments."""
    from lis.paths import cache_dir

    return cache_dir() / "models" / f"tiny-v{BUILD_VERSION}-seed{seed}-sft{sft_steps}"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build_tiny(out_dir: str | Path, seed: int = 0, sft_steps: int = DEFAULT_SFT_STEPS, force: bool = False,
               measure: bool = True, on_progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Build the tiny model into ``out_dir`` and return its manifest (plus ``timings_s``).

    An existing build (``manifest.json`` with the same seed, steps and recipe version) is kept
    unless ``force``. The folder is written next to its final place and renamed in at the end, so
    a crash never leaves a half-written model; a lock file beside it (``.<name>.lock``) lets one
    process build while others wait and then reuse the build. ``measure`` samples held-out turns
    before and after the warm-up to report the valid-tool-call rates (a few seconds).
    ``on_progress(stage, done, total)`` reports the warm-up steps. Raises LisError when
    ``out_dir`` exists and is not a tiny-model build.
    """
    import torch
    from filelock import FileLock

    out = Path(out_dir).expanduser()
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out.parent / f".{out.name}.lock")):  # one builder per folder, across processes
        existing = _existing(out, seed, sft_steps)
        if existing is not None and not force:
            log.info("tiny model already built at %s (seed %d, %d steps)", out, seed, sft_steps)
            return existing
        if out.exists() and not (out / "manifest.json").is_file():
            raise LisError(f"{out} exists and is not a tiny-model build", "choose another --out or remove it")
        threads = torch.get_num_threads()
        torch.set_num_threads(THREADS)
        try:
            return _build(out, seed, sft_steps, measure, on_progress)
        finally:
            torch.set_num_threads(threads)


def _existing(out: Path, seed: int, sft_steps: int) -> dict[str, Any] | None:
    """The manifest of the build in ``out`` when it was made with these arguments, this recipe
    version and the same training episodes (so an edited prompt template or sample set rebuilds)."""
    try:
        manifest = json.loads((out / "manifest.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None
    built = (manifest.get("build_version"), manifest.get("seed"), manifest.get("sft_steps"))
    if built != (BUILD_VERSION, seed, sft_steps) or not (out / "model.safetensors").is_file():
        return None
    from lis.train.teacher import episodes as synth

    episodes = synth.episodes(TRAIN_EPISODES, seed)
    return manifest if manifest.get("data", {}).get("sha256") == synth.episodes_sha256(episodes) else None


def _build(out: Path, seed: int, sft_steps: int, measure: bool,
           on_progress: Callable[[str, int, int], None] | None) -> dict[str, Any]:
    import torch
    import transformers
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    from lis.train.teacher import episodes as synth
    from lis.train.tiny import tokenizer as tt
    from lis.models.base import Sampling
    from lis.models.local_hf import LocalHFModel
    from lis.train.teacher.tasks import sample_tasks
    from lis.train.tiny.warmup import IGNORE, encode, tool_call_rate, train

    timings: dict[str, float] = {}
    t = time.perf_counter()
    files = tt.stdlib_files(STDLIB_FILES)
    samples = sample_tasks()
    train_eps = synth.episodes(TRAIN_EPISODES, seed, samples)
    extra = tt.rendered_texts([(ep.messages, ep.tools) for ep in train_eps])
    tokenizer = tt.train_tokenizer(tt.corpus(files, extra), VOCAB_SIZE, MAX_CONTEXT)
    timings["tokenizer"] = time.perf_counter() - t
    log.info("tokenizer: %d tokens from %d stdlib files + %d rendered episode pieces", len(tokenizer), len(files),
             len(extra))

    t = time.perf_counter()
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    config = Qwen3Config(vocab_size=len(tokenizer), max_position_embeddings=MAX_CONTEXT, tie_word_embeddings=True,
                         bos_token_id=None, eos_token_id=eos, pad_token_id=tokenizer.pad_token_id,
                         dtype="float32", **MODEL_CONFIG)
    with torch.random.fork_rng(devices=[]):  # seed the init without touching the caller's RNG
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=[eos, tokenizer.pad_token_id],
                                               pad_token_id=tokenizer.pad_token_id, do_sample=True, temperature=1.0)
    data = [encode(tokenizer, ep.messages, ep.tools) for ep in train_eps]
    held_out = synth.episodes(EVAL_EPISODES, seed + 10_000, samples)
    timings["init"] = time.perf_counter() - t

    chat = LocalHFModel(model, tokenizer, name="tiny", seed=seed)
    t = time.perf_counter()
    before = tool_call_rate(chat, held_out, seed, Sampling(max_tokens=32), BEFORE_TURNS) if measure else None
    timings["measure"] = time.perf_counter() - t
    t = time.perf_counter()
    progress = (lambda step, _loss: on_progress("warm-up", step, sft_steps)) if on_progress else None
    warm = train(model, data, sft_steps, seed, batch_size=WARMUP_BATCH, lr=WARMUP_LR, on_step=progress)
    timings["warmup"] = time.perf_counter() - t
    log.info("warm-up: %d steps, loss %.3f -> %.3f", warm.steps, warm.first_loss, warm.final_loss)
    t = time.perf_counter()
    after = tool_call_rate(chat, held_out, seed, max_turns=AFTER_TURNS) if measure else None
    paper = tool_call_rate(chat, held_out, seed, Sampling(**PAPER_SAMPLING), AFTER_TURNS) if measure else None
    timings["measure"] += time.perf_counter() - t
    if measure:
        log.info("valid tool calls: %.0f%% before, %.0f%% after the warm-up at T=1.0 (%.0f%% at T=0.7, top_p 0.8, "
                 "top_k 20); %d held-out turns", 100 * before["rate"], 100 * after["rate"], 100 * paper["rate"],
                 after["turns"])

    t = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        manifest = {
            "build_version": BUILD_VERSION, "seed": seed, "sft_steps": sft_steps,
            "architecture": "Qwen3ForCausalLM", **MODEL_CONFIG, "max_context": MAX_CONTEXT,
            "params": sum(p.numel() for p in model.parameters()), "vocab": len(tokenizer),
            "chat_template": f"trl/chat_templates/{tt.TEMPLATE_NAME}",
            "corpus": {"stdlib_files": len(files), "synthetic_texts": len(extra),
                       "sha256": tt.corpus_sha256(files, extra)},
            "data": {"episodes": len(train_eps), "sample_domains": sorted(samples),
                     "by_domain": dict(sorted(Counter(ep.domain for ep in train_eps).items())),
                     "by_mode": dict(sorted(Counter(ep.mode for ep in train_eps).items())),
                     "tokens": sum(len(ex.ids) for ex in data), "trained_tokens": sum(
                         sum(lab != IGNORE for lab in ex.labels) for ex in data),
                     "sha256": synth.episodes_sha256(train_eps)},
            "warmup": {"episodes": warm.examples, "steps": warm.steps, "batch": WARMUP_BATCH, "lr": WARMUP_LR,
                       "tokens_per_step": warm.tokens_per_step,
                       "first_loss": warm.first_loss, "final_loss": warm.final_loss},
            "tool_call_rate": {"before": before, "after": after, "after_paper_sampling": paper} if measure else None,
            "weights_sha256": sha256_file(tmp / "model.safetensors"),
            "tokenizer_sha256": sha256_file(tmp / "tokenizer.json"),
            "versions": {"python": platform.python_version(), "torch": torch.__version__,
                         "transformers": transformers.__version__, "threads": THREADS},
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        tmp.chmod(0o755)
        for f in tmp.iterdir():
            f.chmod(0o644)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    timings["save"] = time.perf_counter() - t
    return {**manifest, "timings_s": {k: round(v, 2) for k, v in timings.items()}}

"""SFT of a base model on trajectory records with PyTorch Lightning: checkpoints, resume, seed, logs.

    train_sft("data/models/base", records, "data/models/sft", params.settings("sft"),
              ckpt_dir="data/train/checkpoints/sft-<hash>")

Checkpoints go to ``ckpt_dir`` (outside the stage's declared output, which Snakemake and DVC
delete before a re-run): a killed run resumes from the last one. Logs: CSV (``logs/``), and
TensorBoard when it is installed. The finished model is written to ``out_dir`` with its
tokenizer and a manifest (data, steps, losses, held-out loss).
"""
from __future__ import annotations

import json
import logging
import random
import shutil
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from lis.config.training import SftSection
from lis.errors import LisError
from lis.manifest import read_model_manifest
from lis.train.disk import require_model_room
from lis.train.lora import lora_config, merged_model, trainable_parameters
from lis.train.precision import resolve_precision
from lis.train.sft.data import batch_loss, examples_from_records, length_batches
from lis.util.files import replace_dir, sha256_file
from lis.util.hashing import hash_obj
from lis.util.progress import at as note_progress

log = logging.getLogger("lis.train.sft")


def train_sft(base_dir: str | Path, records: list[dict[str, Any]], out_dir: str | Path, settings: SftSection, *,
              ckpt_dir: str | Path, progress: bool = False,
              on_step: Callable[[int, float], None] | None = None) -> dict[str, Any]:
    """Fine-tune the model in ``base_dir`` on ``records`` (trajectory dicts: every one is trained on;
    filter before) and write it to ``out_dir``; return the manifest. Raises LisError when there is
    nothing to train on or the base model cannot be loaded."""
    import pytorch_lightning as pl
    import torch
    from pytorch_lightning.callbacks import Callback, ModelCheckpoint
    from pytorch_lightning.loggers import CSVLogger
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # lazy: loads pytorch_lightning, transformers, matplotlib; importing this module does not
    from lis.train.sft.module import SFTData, SFTModule

    s = settings
    base, out, ckpt = Path(base_dir), Path(out_dir), Path(ckpt_dir)
    if not (base / "config.json").is_file():
        raise LisError(f"no base model in {base}", "run the base stage first (lis train base)")
    t0 = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(s.threads)
    try:
        tokenizer = AutoTokenizer.from_pretrained(base)
        rng = random.Random(s.seed)
        order = rng.sample(range(len(records)), len(records))
        n_held = int(len(records) * s.held_out) if s.steps else 0
        held_recs = [records[i] for i in order[:n_held]]
        train_recs = [records[i] for i in order[n_held:]]
        train, counts = examples_from_records(train_recs, tokenizer, s.max_tokens)
        held, _ = examples_from_records(held_recs, tokenizer, s.max_tokens)
        if s.steps and not train:
            raise LisError("no trajectory to train on (none successful, or all longer than sft.max_tokens)",
                           "check the teacher stage's output and its success rate")
        pl.seed_everything(s.seed, workers=True, verbose=False)
        precision = resolve_precision(s.precision.bf16, s.precision.gradient_checkpointing)
        peft_config = lora_config(s.lora, where="sft.lora")
        # full fine-tuning keeps fp32 master weights (bf16 is autocast); LoRA's frozen base may be bf16
        dtype = torch.bfloat16 if peft_config is not None and precision.bf16 else torch.float32
        model = AutoModelForCausalLM.from_pretrained(base, dtype=dtype)
        if precision.gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if peft_config is not None:
            from peft import get_peft_model

            if precision.gradient_checkpointing:
                model.enable_input_require_grads()  # the frozen embeddings' output must carry a gradient
            model = get_peft_model(model, peft_config)
        model.train()
        data_hash = hash_obj([r.get("episode_id") or r.get("task_id") for r in records])
        losses: list[float] = []
        if s.steps:
            module = SFTModule(model, s.lr, s.steps, int(s.steps * s.warmup_ratio), s.weight_decay)

            class _Progress(Callback):
                def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
                    note_progress(f"SFT step {trainer.global_step}/{s.steps} (checkpoint every "
                                f"{max(1, s.checkpoint_every)} steps)")
                    if on_step and pl_module.losses:
                        on_step(trainer.global_step, pl_module.losses[-1])

            ckpt.mkdir(parents=True, exist_ok=True)
            run = len(list((ckpt / "logs").glob("run*"))) if (ckpt / "logs").is_dir() else 0  # one per (re)start
            loggers = [CSVLogger(save_dir=str(ckpt / "logs"), name="", version=f"run{run}")]
            try:
                from pytorch_lightning.loggers import TensorBoardLogger

                import tensorboard  # noqa: F401 - optional
                loggers.append(TensorBoardLogger(save_dir=str(ckpt / "logs"), name="tb", version=f"run{run}"))
            except ImportError:
                pass
            saver = ModelCheckpoint(dirpath=ckpt, every_n_train_steps=max(1, s.checkpoint_every), save_last=True,
                                    save_top_k=0)
            accelerator = s.accelerator
            if accelerator == "auto" and not torch.cuda.is_available():
                accelerator = "cpu"
            trainer = pl.Trainer(accelerator=accelerator, devices=s.devices, strategy=_strategy(s),
                                 precision="bf16-mixed" if precision.bf16 else "32-true",
                                 use_distributed_sampler=False, max_steps=s.steps, gradient_clip_val=s.grad_clip, logger=loggers,
                                 callbacks=[saver, _Progress()], enable_progress_bar=progress,
                                 enable_model_summary=False, log_every_n_steps=10, deterministic=True,
                                 num_sanity_val_steps=0, limit_val_batches=0)
            last = ckpt / "last.ckpt"
            resumed = last.is_file()
            start = 0
            if resumed:
                start = int(torch.load(last, map_location="cpu", weights_only=False)["global_step"])
                log.info("resuming SFT from %s (step %d of %d)", last, start, s.steps)
            note_progress(f"SFT step {start}/{s.steps} (checkpoint every {max(1, s.checkpoint_every)} steps)")
            if s.devices > 1:
                log.info("SFT on %d processes (%s, %s): each step %d batches of %d", s.devices, s.strategy,
                         accelerator, s.devices, s.batch_size)
            trainer.fit(module, datamodule=SFTData(train, s.batch_size, s.steps, s.seed, start),
                        ckpt_path=str(last) if resumed else None)
            losses, ranks = module.losses, module.ranks
            if trainer.global_rank != 0:  # DDP: rank 0 alone writes the model (the others trained with it)
                log.info("SFT rank %d of %d: %d steps done; rank 0 writes the model", trainer.global_rank,
                         trainer.world_size, len(losses))
                return {"rank": trainer.global_rank, "world_size": trainer.world_size, "steps_done": len(losses),
                        "written": False}
            world = trainer.world_size
        else:
            resumed, ranks, world = False, [], 1
        trainable, total = trainable_parameters(model)
        model = merged_model(model)  # LoRA: the adapters merged into the base (a plain model is written)
        model.eval()
        held_loss = _held_out_loss(model, held)
        require_model_room(out.parent, model, "sft")
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        try:
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
            if (ckpt / "logs").is_dir():
                shutil.copytree(ckpt / "logs", tmp / "logs", dirs_exist_ok=True)
                _merge_csv(sorted((tmp / "logs").glob("run*/metrics.csv")), tmp / "logs" / "metrics.csv")
            base_manifest = read_model_manifest(base)
            tail = losses[-max(1, len(losses) // 10):] if losses else []
            manifest = {
                "kind": "sft", "base": str(base), "base_id": base_manifest.get("id"), "settings": s.model_dump(),
                "data": {**counts, "records": len(train_recs), "held_out_records": len(held_recs), "hash": data_hash},
                "steps_done": len(losses), "resumed": resumed, "world_size": world, "ranks": ranks,
                "precision": asdict(precision), "lora_rank": s.lora.rank,
                "parameters": {"trainable": trainable, "total": total},
                "loss": {"first": round(losses[0], 4) if losses else None,
                         "final": round(sum(tail) / len(tail), 4) if tail else None,
                         "held_out": held_loss},
                "weights_sha256": sha256_file(tmp / "model.safetensors"),
                "wall_s": round(time.perf_counter() - t0, 2),
            }
            manifest["id"] = hash_obj({"weights": manifest["weights_sha256"], "base": manifest["base_id"]})
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
            replace_dir(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        shutil.rmtree(ckpt, ignore_errors=True)  # finished: the output is the model now
    finally:
        torch.set_num_threads(threads)
    log.info("SFT: %d steps on %d examples (world size %d), loss %s -> %s (held-out %s), %.1f s", len(losses),
             counts["examples"], world, manifest["loss"]["first"], manifest["loss"]["final"], held_loss,
             manifest["wall_s"])
    return manifest


def _strategy(s: SftSection) -> Any:
    """Lightning's strategy of the settings: several processes need DDP (one process: auto)."""
    if s.devices > 1 and s.strategy not in ("ddp", "auto"):
        raise LisError(f"sft.strategy {s.strategy!r} cannot run sft.devices={s.devices} processes", "use ddp")
    if s.devices > 1:
        from pytorch_lightning.strategies import DDPStrategy

        # gloo on CPU (Lightning's default there), nccl on GPUs
        return DDPStrategy(find_unused_parameters=False)
    return s.strategy


def _held_out_loss(model: Any, held: list) -> float | None:
    import torch

    if not held:
        return None
    with torch.no_grad():
        values = [(float(batch_loss(model, b)), len(b)) for b in length_batches(held, 4)]
    return round(sum(v * n for v, n in values) / sum(n for _, n in values), 4)


def _merge_csv(parts: list[Path], dest: Path) -> None:
    """The CSV logs of every (re)start as one file (rows of a step logged twice: the later run's)."""
    import csv

    rows: dict[tuple, dict] = {}
    fields: list[str] = []
    for part in parts:
        with open(part, newline="") as f:
            for row in csv.DictReader(f):
                fields += [k for k in row if k not in fields]
                rows[(row.get("step"), tuple(k for k, v in row.items() if v))] = row
    with open(dest, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for row in sorted(rows.values(), key=lambda r: int(float(r.get("step") or 0))):
            w.writerow(row)

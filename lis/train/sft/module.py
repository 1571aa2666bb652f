"""The LightningModule and data of SFT: next-token loss on labelled (assistant) tokens only."""
from __future__ import annotations

import random
from typing import Any

import pytorch_lightning as pl
import torch

from lis.train.sft.data import Example, batch_loss, length_batches


class LengthBatches(torch.utils.data.Dataset):
    """Batches of examples of similar length in a seeded order, shuffled anew each pass: item ``i`` is the
    whole batch of optimizer step ``i`` (this process's share of it under DDP)."""

    def __init__(self, data: list[Example], batch_size: int, steps: int, seed: int, rank: int = 0, world: int = 1):
        batches = length_batches(data, batch_size)
        rng = random.Random(seed)
        order: list[int] = []
        while len(order) < steps * world:
            order += rng.sample(range(len(batches)), len(batches))
        # one optimizer step takes ``world`` consecutive batches of the order, one per process (rank r the r-th)
        self.batches, self.order = batches, order[rank:steps * world:world]
        self.order_digest = _digest(order[:steps * world])  # every process's: the same on each rank

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, i: int) -> list[Example]:
        return self.batches[self.order[i]]


class FromStep(torch.utils.data.Sampler):
    """Steps ``start`` .. ``steps`` - 1 with the whole run's length, because Lightning, resuming, counts the
    batches already done: a shorter epoch would end early and the next train some batches twice."""

    def __init__(self, steps: int, start: int = 0):
        self.steps, self.start = steps, start

    def __iter__(self):
        return iter(range(self.start, self.steps))

    def __len__(self) -> int:
        return self.steps


class StepLoader(torch.utils.data.DataLoader):
    """The SFT batches from the step a run resumes at. Its ``state_dict`` records what the order was made
    of, so a checkpoint whose data, seed or length differ (its steps would not continue it) is refused."""

    def __init__(self, dataset: LengthBatches, steps: int, start: int, seed: int):
        super().__init__(dataset, batch_size=None, sampler=FromStep(steps, start), collate_fn=_keep, num_workers=0)
        self.identity = {"seed": seed, "steps": steps, "batches": len(dataset.batches),
                         "order": dataset.order_digest}

    def state_dict(self) -> dict[str, Any]:
        return dict(self.identity)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state and state != self.identity:
            from lis.errors import LisError

            raise LisError(f"the SFT checkpoint was made with other data or settings ({state} vs {self.identity})",
                           "delete the checkpoint folder to start again, or restore the data and sft settings")


def _digest(order: list[int]) -> str:
    import hashlib

    return hashlib.sha256(",".join(map(str, order)).encode()).hexdigest()[:16]


def _keep(batch: list[Example]) -> list[Example]:
    return batch


class SFTModule(pl.LightningModule):
    """AdamW with a linear warm-up then linear decay (to 5% of the peak) over ``total_steps``."""

    def __init__(self, model: Any, lr: float, total_steps: int, warmup_steps: int, weight_decay: float = 0.0):
        super().__init__()
        self.model = model
        self.lr, self.total_steps, self.warmup_steps = lr, total_steps, max(1, warmup_steps)
        self.weight_decay = weight_decay
        self.losses: list[float] = []
        self.ranks: list[dict[str, Any]] = []  # per process (DDP): steps and first/last loss, gathered at the end

    def transfer_batch_to_device(self, batch: list[Example], device: torch.device, dataloader_idx: int) -> list[Example]:
        """The batch as it is: :func:`batch_loss` builds its tensors on the model's device, and Lightning's
        default would copy every :class:`Example`'s lists of ids element by element, for nothing."""
        return batch

    def training_step(self, batch: list[Example], batch_idx: int) -> torch.Tensor:
        loss = batch_loss(self.model, batch)
        value = float(loss.detach())
        self.losses.append(value)
        self.log("train/loss", value, prog_bar=True, batch_size=len(batch))
        self.log("train/tokens", float(sum(len(ex.ids) for ex in batch)), reduce_fx="sum", batch_size=len(batch))
        return loss

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["lis_losses"] = list(self.losses)  # a resumed run reports the whole run's steps and losses

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self.losses = list(checkpoint.get("lis_losses") or [])

    def on_train_end(self) -> None:
        """What every process trained (gathered from all of them: evidence that each rank did its share)."""
        first = self.losses[0] if self.losses else float("nan")
        last = self.losses[-1] if self.losses else float("nan")
        mine = torch.tensor([float(self.global_rank), float(len(self.losses)), first, last], dtype=torch.float64)
        every = self.all_gather(mine).reshape(-1, 4).tolist()
        self.ranks = [{"rank": int(r), "steps": int(n), "loss_first": round(a, 4), "loss_last": round(b, 4)}
                      for r, n, a, b in every]

    def configure_optimizers(self):
        params = [p for p in self.model.parameters() if p.requires_grad]  # LoRA: the adapters only
        opt = torch.optim.AdamW(params, lr=self.lr, weight_decay=self.weight_decay)
        total, warm = self.total_steps, self.warmup_steps
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min(1.0, (s + 1) / warm) * max(0.05, 1 - s / max(total, 1)))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def loader(data: list[Example], batch_size: int, steps: int, seed: int, start: int = 0, rank: int = 0,
           world: int = 1) -> StepLoader:
    return StepLoader(LengthBatches(data, batch_size, steps, seed, rank, world), steps, start, seed)


class SFTData(pl.LightningDataModule):
    """The training batches of this process: built when the trainer knows its rank and world size
    (under DDP each process takes its own batches of the one seeded order; no DistributedSampler)."""

    def __init__(self, data: list[Example], batch_size: int, steps: int, seed: int, start: int = 0):
        super().__init__()
        self.data, self.batch_size, self.steps, self.seed, self.start = data, batch_size, steps, seed, start

    def train_dataloader(self) -> torch.utils.data.DataLoader:
        t = self.trainer
        return loader(self.data, self.batch_size, self.steps, self.seed, self.start, t.global_rank, t.world_size)

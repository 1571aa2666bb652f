"""The paper-scale rehearsal: the ``full`` profile's training on a random-init Qwen3 (``lis train rehearse``)."""
from lis.train.rehearsal.run import paper_loss_by_hand, rehearsal_tasks, rehearse
from lis.train.rehearsal.scripted import KINDS, ScriptedTurns

__all__ = ["KINDS", "ScriptedTurns", "paper_loss_by_hand", "rehearsal_tasks", "rehearse"]

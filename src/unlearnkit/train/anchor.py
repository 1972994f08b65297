"""Decay toward the starting weights: after every optimiser step each trained weight moves a fixed share
of the way back to the value it had when training began.

The penalty is L2-SP (Li, Grandvalet & Davoine, "Explicit inductive bias for transfer learning with
convolutional networks", ICML 2018: weight decay toward the pretrained starting point instead of
toward zero), applied decoupled from the gradient as AdamW decouples its decay (Loshchilov & Hutter,
ICLR 2019), so Adam's per-weight scaling does not weaken it where gradients are large. A fine-tune then
learns new facts where the loss pushes hard, while every weight the new data does not need drifts back
to what the model knew.

Unlike AdamW's decay the share is **not** scaled by the learning rate: on the embedded world's QA split
as a folder of one's own (bench/user_folder.py, seed 0) a pull scaled by a cosine schedule fades as the
rate does and kept 0.82 of the base's general knowledge, the fixed pull 0.94 (the trained facts 0.97
and 0.96). So the strength depends on the number of steps a run takes: ``anchor_decay`` x steps is
about how many times the pull has restored the start.

Costs one copy of the trained weights (in their own dtype and device) and one fused ``lerp`` per step.
"""

from __future__ import annotations

import torch
from transformers import TrainerCallback

from unlearnkit.errors import UserError


class AnchorDecay(TrainerCallback):
    """``w <- w + rate * (w_start - w)`` for every trained weight after each optimiser step.

    ``w_start`` is copied when the callback is made, before ``Trainer.train`` restores a checkpoint, so a
    resumed run pulls toward the same start as an uninterrupted one.
    """

    def __init__(self, model: torch.nn.Module, rate: float) -> None:
        if not 0 < rate < 1:
            raise ValueError(f"anchor_decay={rate!r} is invalid: must be in [0, 1) (0 = off)")
        self.rate = float(rate)
        self.params = [p for p in model.parameters() if p.requires_grad]  # tied weights once
        with torch.no_grad():
            self.start = [p.detach().clone() for p in self.params]

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        # FSDP replaces the parameters by flat shards, DeepSpeed ZeRO-3 empties them in place: the copy
        # would no longer match them
        live = {id(p) for p in model.parameters() if p.requires_grad} if model is not None else set()
        if any(id(p) not in live or p.shape != s.shape for p, s in zip(self.params, self.start)):
            raise UserError(
                "--set anchor_decay: the trained weights were replaced after the start was copied (FSDP or "
                "DeepSpeed shard them); use one process or DDP, or anchor_decay=0"
            )

    def on_optimizer_step(self, args, state, control, **kwargs):
        with torch.no_grad():
            torch._foreach_lerp_(self.params, self.start, self.rate)


def anchor_callbacks(model: torch.nn.Module, rate: float) -> list[TrainerCallback]:
    """``[AnchorDecay(model, rate)]`` when ``rate`` > 0, else nothing (the plain Trainer, bit for bit)."""
    return [AnchorDecay(model, rate)] if rate > 0 else []

"""How a step's terms add up: ``forget_weight * L_forget + retain_weight * L_retain``.

Every method's step (beside its loss in this package) ends in :func:`combine`, which adds the retain term
the settings ask for (:func:`retain_term`: NLL on the paired retain example, or KL to the original model)
and logs both terms. The step's ``ctx`` is :class:`unlearnkit.train.methods.StepContext`: ``ctx.policy``
runs the model being trained, ``ctx.ref_logits`` / ``ctx.ref_logps`` / ``ctx.teacher_logits`` the frozen
original.
"""

from __future__ import annotations

import torch

from unlearnkit.objectives.kl import forward_kl_loss
from unlearnkit.objectives.nll import nll_loss


def has_retain_term(ctx, cfg) -> bool:
    """Whether :func:`retain_term` adds a term (and runs a retain forward pass)."""
    return cfg.retain_loss != "none" and cfg.retain_weight != 0 and ctx.wants_retain


def retain_term(ctx, batch: dict, cfg) -> tuple[torch.Tensor | None, dict]:
    """NLL_mean on the paired retain example, or KL(p_ref || p_theta) on its answer tokens."""
    if not has_retain_term(ctx, cfg):
        return None, {}
    r = ctx.policy(batch["retain"])
    if cfg.retain_loss == "nll":
        loss = nll_loss(r.logps, r.mask.float(), cfg.loss_reduction)
    else:
        loss = forward_kl_loss(ctx.ref_logits(batch["retain"]), r.logits, r.mask.float(), cfg.loss_reduction)
    return loss, {f"retain_{cfg.retain_loss}": loss.detach()}


def combine(
    forget_loss: torch.Tensor,
    ctx,
    batch: dict,
    cfg,
    logs: dict | None = None,
    *,
    forget_extra: torch.Tensor | None = None,
    retain_extra: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict]:
    """``forget_weight * L_forget + retain_weight * L_retain`` (+ a step's own extra forget / retain terms,
    added as they are), with both terms logged; the forget / retain split is left in ``ctx.parts``.

    The forget part is complete before the retain forward pass runs: a training context may take its
    gradient there (``ctx.settle_forget``, :class:`unlearnkit.train.trainer.TrainStepContext`), so the
    forget pass's activations are freed before the retain pass stores its own.
    """
    forget_part = cfg.forget_weight * forget_loss
    if forget_extra is not None:
        forget_part = forget_part + forget_extra
    retain_follows = has_retain_term(ctx, cfg) or (retain_extra is not None and ctx.wants_retain)
    total = ctx.settle_forget(forget_part) if retain_follows else forget_part
    retain_loss, retain_logs = retain_term(ctx, batch, cfg)
    retain_part = None
    if retain_loss is not None:
        retain_part = cfg.retain_weight * retain_loss
        total = total + retain_part
    if retain_extra is not None and ctx.wants_retain:
        total = total + retain_extra
        retain_part = retain_extra if retain_part is None else retain_part + retain_extra
    ctx.parts = (forget_part, retain_part)
    return total, {"forget_loss": forget_loss.detach(), **(logs or {}), **retain_logs}

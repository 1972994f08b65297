"""Gradient ascent: the negative log-likelihood (:mod:`unlearnkit.objectives.nll`) ascended.

GA: Jang et al., "Knowledge Unlearning for Mitigating Privacy Risks in Language Models",
arXiv 2210.01504; used as the basic TOFU baseline (arXiv 2401.06121).
"""

from __future__ import annotations

import torch

from unlearnkit.objectives.combine import combine
from unlearnkit.objectives.nll import nll_loss


def ga_loss(logps: torch.Tensor, weights: torch.Tensor, reduction: str = "sequence") -> torch.Tensor:
    """Gradient ascent, ``L = -NLL(F)``: minimising it pushes the forget answers' likelihood down.

    Unbounded below, so GA collapses the model if run long enough (expected; report it).
    Shapes and ``reduction`` as in :func:`nll_loss` (open-unlearning's GradAscent: ``token``).
    """
    return -nll_loss(logps, weights, reduction)


def step_ga(ctx, batch, cfg):
    """GA and GradDiff (``gd``: the same step, retain NLL on by default)."""
    f = ctx.policy(batch["forget"])
    return combine(ga_loss(f.logps, f.weights, cfg.loss_reduction), ctx, batch, cfg)

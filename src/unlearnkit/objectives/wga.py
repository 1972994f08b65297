"""Weighted gradient ascent.

Wang et al., "Rethinking LLM Unlearning Objectives: A Gradient Perspective and Go Beyond",
arXiv 2502.19301 (WGA). Token-weighted variants from TokenUnlearn (arXiv 2605.00364).
"""

from __future__ import annotations

import torch

from unlearnkit.objectives.combine import combine
from unlearnkit.objectives.reduction import reduce_tokens


def wga_loss(
    logps: torch.Tensor, weights: torch.Tensor, beta: float = 1.0, reduction: str = "sequence"
) -> torch.Tensor:
    """GA with each token's ascent scaled by its (detached) confidence ``p_theta(y_t)^beta``.

    Tokens the model has already forgotten (low probability) stop receiving a push, which keeps
    the ascent from running away as plain GA does.

    Args:
        logps (`Tensor [B,T]`): log-probs of the forget answer tokens.
        weights (`Tensor [B,T]`): answer mask or TokenUnlearn weights (multiplied with p^beta).
        beta (`float`, defaults to 1.0): sharpness of the confidence weighting (paper range 1-5).
        reduction (`str`, defaults to ``"sequence"``): ``sequence`` = weighted mean per sequence
            (normalised by the token weights, not by the confidences), then over sequences; ``token`` =
            one mean over all answer tokens of the batch, as open-unlearning's WGA
            (``-(w * nll)[labels != -100].mean()``).
    """
    confidence = torch.exp(beta * logps.detach()) * (weights > 0)
    return reduce_tokens(confidence * logps, weights, reduction)


def step_wga(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    return combine(wga_loss(f.logps, f.weights, cfg.beta, cfg.loss_reduction), ctx, batch, cfg)

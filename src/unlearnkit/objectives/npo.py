"""Negative Preference Optimization.

Zhang et al., "Negative Preference Optimization: From Catastrophic Collapse to Effective
Unlearning", arXiv 2404.05868, eq. (3). Token-weighted form from TokenUnlearn (arXiv 2605.00364).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from unlearnkit.objectives.combine import combine


def npo_loss(
    logps: torch.Tensor, ref_logps: torch.Tensor, weights: torch.Tensor, beta: float = 0.1
) -> torch.Tensor:
    """``-(2/beta) * mean_i log sigmoid(-beta * r_i)`` with ``r_i = sum_t w_t (log p_theta - log p_ref)``.

    Intuition: a bounded version of gradient ascent; the push on a sequence fades once its
    likelihood has dropped below the reference model's. As ``beta -> 0`` the gradient tends to GA's.

    Args:
        logps (`Tensor [B,T]`): policy log-probs of the forget answer tokens.
        ref_logps (`Tensor [B,T]`): reference (original model) log-probs, no gradient.
        weights (`Tensor [B,T]`): the answer mask (standard NPO: sequence sums) or TokenUnlearn
            weights (the log-ratio becomes a weighted sum of per-token log-ratios).
        beta (`float`, defaults to 0.1): inverse temperature of the preference loss.
    Reduction: mean over sequences; sequences with no weighted token contribute r_i = 0.
    """
    log_ratio = ((logps - ref_logps.detach()) * weights).sum(-1)
    return -(2.0 / beta) * F.logsigmoid(-beta * log_ratio).mean()


def step_npo(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    ref_logps = ctx.ref_logps(batch["forget"])
    return combine(npo_loss(f.logps, ref_logps, f.weights, cfg.beta), ctx, batch, cfg)

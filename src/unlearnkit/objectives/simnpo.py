"""Simple Negative Preference Optimization (SimNPO).

Fan et al., "Simplicity Prevails: Rethinking Negative Preference Optimization for LLM Unlearning",
arXiv 2410.07163, eq. (4).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from unlearnkit.objectives.combine import combine
from unlearnkit.tokens import batch_mean, sequence_mean


def simnpo_loss(
    logps: torch.Tensor, weights: torch.Tensor, beta: float = 2.5, gamma: float = 0.0
) -> torch.Tensor:
    """``-(2/beta) * mean_i log sigmoid(-beta * m_i - gamma)`` with ``m_i = sum_t w_t logp_t / sum_t w_t``.

    Intuition: NPO without the reference model, on the length-normalised log-likelihood, so long
    answers are not pushed harder than short ones; the push fades as ``m_i`` becomes very negative.
    The paper's ``log pi_theta(y|x) / |y|`` is ``m_i`` with the answer mask as ``weights``; its reward
    margin ``gamma`` sits outside ``beta`` as in the paper (open-unlearning writes
    ``beta * (NLL/|y| - delta)``, i.e. ``delta = gamma / beta``).

    Args:
        logps (`Tensor [B,T]`): policy log-probs of the forget answer tokens (aligned, 0 where masked).
        weights (`Tensor [B,T]`): the answer mask (paper) or TokenUnlearn weights (weighted mean).
        beta (`float`, defaults to 2.5): inverse temperature (paper range 2.5-4.5).
        gamma (`float`, defaults to 0.0): reward margin (0 in the paper's TOFU runs).
    Reduction: mean over sequences; rows without any weighted token are left out of the mean
    (unlike NPO, an empty row would otherwise add the constant ``-(2/beta) log sigmoid(-gamma)``).
    All rows empty gives 0, still attached to the graph.
    """
    mean_logp, valid = sequence_mean(logps, weights)
    per_row = -(2.0 / beta) * F.logsigmoid(-beta * mean_logp - gamma)
    return batch_mean(per_row, valid)


def step_simnpo(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    return combine(simnpo_loss(f.logps, f.weights, cfg.beta, cfg.gamma), ctx, batch, cfg)

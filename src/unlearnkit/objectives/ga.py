"""Gradient ascent and the plain negative log-likelihood it ascends.

GA: Jang et al., "Knowledge Unlearning for Mitigating Privacy Risks in Language Models",
arXiv 2210.01504; used as the basic TOFU baseline (arXiv 2401.06121).
"""

from __future__ import annotations

import torch

from unlearnkit.tokens import batch_mean, sequence_mean


def nll_loss(logps: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """NLL_mean: per sequence the weighted mean of ``-log p(y_t)``, then the mean over sequences.

    Args:
        logps (`Tensor [B,T]`): log-probabilities of the answer tokens (aligned, see ``tokens.shift``).
        weights (`Tensor [B,T]`): token weights, 0 outside the answer. The answer mask gives the
            usual NLL_mean; TokenUnlearn weights give its token-level variant.
    Rows without any weighted token are left out of the mean.
    """
    per_row, valid = sequence_mean(-logps, weights)
    return batch_mean(per_row, valid)


def ga_loss(logps: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Gradient ascent, ``L = -NLL_mean(F)``: minimising it pushes the forget answers' likelihood down.

    Unbounded below, so GA collapses the model if run long enough (expected; report it).
    Shapes as in :func:`nll_loss`.
    """
    return -nll_loss(logps, weights)

"""Forward KL between a target distribution and the model, on answer tokens only.

Serves two roles: the retain regulariser KL(p_ref || p_theta) (TOFU, arXiv 2401.06121) and the ASU
distillation loss KL(p_teacher || p_theta) (arXiv 2603.01285, eq. for L_ASU).
"""

from __future__ import annotations

import torch

from unlearnkit.tokens import batch_mean, sequence_mean


def token_kl(target_logits: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """Per-position ``KL(softmax(target) || softmax(logits))`` over the full vocabulary: ``[B,T]``."""
    target_logp = torch.log_softmax(target_logits.detach().float(), dim=-1)
    logp = torch.log_softmax(logits.float(), dim=-1)
    return (target_logp.exp() * (target_logp - logp)).sum(-1)


def forward_kl_loss(target_logits: torch.Tensor, logits: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Mean over sequences of the weighted per-sequence mean of the token KL(target || model).

    Args:
        target_logits (`Tensor [B,T,V]`): frozen target (reference model or smoothed teacher),
            aligned with ``logits``; no gradient flows into it.
        logits (`Tensor [B,T,V]`): the model being trained.
        weights (`Tensor [B,T]`): 0 on prompt and padding positions, so neither enters the average
            (the reference code's retain KL averaged over them).
    Zero when the two distributions agree; rows without weighted tokens are left out.
    """
    # Only weighted positions are turned into full-vocabulary distributions: with a 128k vocabulary
    # the prompt and padding positions would otherwise dominate the memory of this loss.
    selected = weights > 0
    kl = torch.zeros(weights.shape, dtype=torch.float32, device=weights.device)
    kl = kl.masked_scatter(selected, token_kl(target_logits[selected], logits[selected]))
    per_row, valid = sequence_mean(kl, weights)
    return batch_mean(per_row, valid)

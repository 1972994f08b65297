"""Forward KL between a target distribution and the model, on answer tokens only.

Serves two roles: the retain regulariser KL(p_ref || p_theta) (TOFU, arXiv 2401.06121) and the ASU
distillation loss KL(p_teacher || p_theta) (arXiv 2603.01285, eq. for L_ASU).
"""

from __future__ import annotations

import torch

from unlearnkit.objectives.reduction import reduce_tokens


def token_kl(target_logits: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """Per-position ``KL(softmax(target) || softmax(logits))`` over the full vocabulary: ``[B,T]``."""
    target_logp = torch.log_softmax(target_logits.detach().float(), dim=-1)
    logp = torch.log_softmax(logits.float(), dim=-1)
    return (target_logp.exp() * (target_logp - logp)).sum(-1)


def forward_kl_loss(
    target_logits: torch.Tensor, logits: torch.Tensor, weights: torch.Tensor, reduction: str = "sequence"
) -> torch.Tensor:
    """The token KL(target || model) on weighted (answer) tokens, reduced per ``reduction``.

    Args:
        target_logits (`Tensor [B,T,V]`): frozen target (reference model or smoothed teacher),
            aligned with ``logits``; no gradient flows into it.
        logits (`Tensor [B,T,V]`): the model being trained.
        weights (`Tensor [B,T]`): 0 on prompt and padding positions, so neither enters the average
            (the reference code's retain KL averaged over them).
        reduction (`str`, defaults to ``"sequence"``): ``sequence`` = weighted mean per sequence, then
            over sequences; ``token`` = one mean over all weighted tokens of the batch.
    Zero when the two distributions agree; rows without weighted tokens are left out.
    """
    # Only weighted positions are turned into full-vocabulary distributions: with a 128k vocabulary
    # the prompt and padding positions would otherwise dominate the memory of this loss.
    selected = weights > 0
    kl = torch.zeros(weights.shape, dtype=torch.float32, device=weights.device)
    kl = kl.masked_scatter(selected, token_kl(target_logits[selected], logits[selected]))
    return reduce_tokens(kl, weights, reduction)

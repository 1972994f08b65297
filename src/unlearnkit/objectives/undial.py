"""UNDIAL: self-distillation with adjusted logits.

Dong et al., "UNDIAL: Self-Distillation with Adjusted Logits for Robust Unlearning in Large Language
Models", arXiv 2402.10052.
"""

from __future__ import annotations

import torch

from unlearnkit.objectives.combine import combine
from unlearnkit.tokens import batch_mean, sequence_mean, shifted_targets


def undial_targets(ref_logits: torch.Tensor, targets: torch.Tensor, beta: float) -> torch.Tensor:
    """Log of the adjusted teacher ``q = softmax(z_ref - beta * onehot(y_t))``: ``[B,T,V]`` float32, no grad."""
    if targets.numel() and int(targets.min()) < 0:
        raise ValueError(
            "undial: targets contain negative ids (e.g. -100); pass valid token ids (such as 0) at masked "
            "positions and exclude them through the weights instead"
        )
    if targets.numel() and int(targets.max()) >= ref_logits.shape[-1]:
        raise ValueError(f"undial: target id {int(targets.max())} >= vocabulary size {ref_logits.shape[-1]}")
    z = ref_logits.detach().float()
    penalty = torch.full(targets.shape + (1,), -float(beta), dtype=z.dtype, device=z.device)
    adjusted = torch.scatter_add(z, -1, targets.unsqueeze(-1), penalty)
    return torch.log_softmax(adjusted, dim=-1)


def undial_loss(
    logits: torch.Tensor,
    ref_logits: torch.Tensor,
    targets: torch.Tensor,
    weights: torch.Tensor,
    beta: float = 10.0,
) -> torch.Tensor:
    """``CE(q, p_theta) = -sum_v q_v log p_theta(v)`` with ``q = softmax(z_ref - beta * onehot(y_t))``.

    Intuition: distil the original model into itself, but with the logit of the token to be forgotten
    lowered by ``beta``; the rest of the distribution (and so fluency) is kept, and the objective is
    bounded, unlike gradient ascent. ``beta = 0`` is plain self-distillation: the loss is then
    ``H(p_ref) + KL(p_ref || p_theta)``.

    Args:
        logits (`Tensor [B,T,V]`): the model's aligned logits on the forget inputs.
        ref_logits (`Tensor [B,T,V]`): the frozen original model's aligned logits ``z_ref``; no gradient.
        targets (`Tensor [B,T]` long): the aligned next-token ids ``y_t`` (``tokens.shift`` output). They
            must be valid ids everywhere: masked positions carry any valid id (``shift`` uses 0) and are
            excluded by ``weights``. Do NOT pass raw labels with -100: a reference implementation
            scattered -100 into the vocabulary, which wraps around to a real token; we raise
            ``ValueError`` on any negative (or out-of-vocabulary) id instead.
        weights (`Tensor [B,T]`): answer mask or TokenUnlearn weights.
        beta (`float`, defaults to 10.0): how far the target token's logit is lowered.
    Reduction: weighted mean per sequence, then mean over sequences; rows without weighted tokens are
    left out. (The reference code averages over every position, prompt and padding included.)
    """
    log_q = undial_targets(ref_logits, targets, beta)
    logp = torch.log_softmax(logits.float(), dim=-1)
    per_token = -(log_q.exp() * logp).sum(-1)
    per_row, valid = sequence_mean(per_token, weights)
    return batch_mean(per_row, valid)


def step_undial(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    targets = shifted_targets(batch["forget"]["labels"])
    loss = undial_loss(f.logits, ctx.ref_logits(batch["forget"]), targets, f.weights, cfg.beta)
    return combine(loss, ctx, batch, cfg)

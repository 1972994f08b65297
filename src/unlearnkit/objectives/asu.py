"""Attention Smoothing Unlearning (ASU).

"Attention Smoothing Is All You Need For Unlearning", arXiv 2603.01285 (ICLR 2026).
The teacher is the frozen original model with every self-attention softmax at temperature tau
(see ``unlearnkit.attention.smoothed_attention``). Facts need sharp attention on the entity;
function words do not, so distilling towards the smoothed teacher erases facts while the answer
stays fluent.
"""

from __future__ import annotations

import torch

from unlearnkit.objectives.combine import combine
from unlearnkit.objectives.kl import forward_kl_loss
from unlearnkit.objectives.nll import nll_loss


def asu_loss(
    teacher_logits: torch.Tensor, logits: torch.Tensor, weights: torch.Tensor, reduction: str = "sequence"
) -> torch.Tensor:
    """``L_ASU = E_F[(1/T) sum_t KL(p_teacher(.|x,y_<t) || p_theta(.|x,y_<t))]`` (forward KL, full vocab).

    Args:
        teacher_logits (`Tensor [B,T,V]`): smoothed-teacher logits at output temperature 1, no grad.
        logits (`Tensor [B,T,V]`): the student's logits on the same forget inputs.
        weights (`Tensor [B,T]`): answer mask (QA), all real tokens (raw text, MUSE), the mask without
            the first answer token (ASU+IDK), or TokenUnlearn weights (``t-asu``, untried by both papers).
        reduction (`str`, defaults to ``"sequence"``): the paper's ``E_F[(1/T) sum_t ...]`` is
            ``sequence`` (mean per sequence, then over the batch); ``token`` is one mean over all
            answer tokens of the batch. ``unlearnkit.train.methods`` always uses ``sequence`` for this term
            (the paper's equation); ``loss_reduction`` applies to the retain term.
    Zero when student = teacher.
    """
    return forward_kl_loss(teacher_logits, logits, weights, reduction)


def drop_first_answer_token(weights: torch.Tensor) -> torch.Tensor:
    """ASU+IDK: exclude the first answer token from the KL (the IDK loss decides how answers start)."""
    answer = weights > 0
    first = answer & (answer.cumsum(-1) == 1)
    return weights * (~first)


def step_asu(ctx, batch, cfg):
    teacher = ctx.teacher_logits(batch["forget"], cfg.tau, cfg.layer_list())
    f = ctx.policy(batch["forget"])
    # ASU+IDK: the refusal loss decides how the answer starts, so its first token leaves the KL.
    kl = asu_loss(teacher, f.logits, drop_first_answer_token(f.weights) if cfg.idk else f.weights)
    # The [B,T,V] teacher is not needed for the backward pass (the KL keeps its answer rows): freed here,
    # before the retain (and IDK) forward passes, it is not part of the step's peak memory.
    del teacher
    if not cfg.idk:
        return combine(kl, ctx, batch, cfg)
    i = ctx.policy(batch["idk"])
    idk = nll_loss(i.logps, i.mask.float(), cfg.loss_reduction)
    logs = {"asu_kl": kl.detach(), "idk_nll": idk.detach()}
    if cfg.lambda_scales_idk:  # L = lambda * (KL + IDK) + L_retain
        return combine(kl + idk, ctx, batch, cfg, logs)
    return combine(kl, ctx, batch, cfg, logs, forget_extra=idk)  # L = lambda * KL + IDK + L_retain

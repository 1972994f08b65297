"""Maximum entropy (ME) forget loss of ME+GD.

Yuan et al., "A Closer Look at Machine Unlearning for Large Language Models", arXiv 2410.08109.
"""

from __future__ import annotations

import math

import torch

from unlearnkit.objectives.combine import combine
from unlearnkit.objectives.reduction import reduce_tokens


def token_uniform_kl(logits: torch.Tensor) -> torch.Tensor:
    """Per-position ``KL(Uniform_V || softmax(logits)) = -log V - (1/V) sum_v log p_v``: ``[B,T]``, >= 0."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    return -math.log(logits.shape[-1]) - logp.mean(-1)


def me_loss(logits: torch.Tensor, weights: torch.Tensor, reduction: str = "sequence") -> torch.Tensor:
    """ME: push the next-token distribution on forget answers towards uniform, ``KL(U || p_theta)``.

    Intuition: a model that is maximally uncertain on the forget answers behaves like one that never
    saw them (a randomly initialised model), without the unbounded collapse of gradient ascent; the
    loss is bounded below by 0, reached exactly at the uniform distribution.

    Args:
        logits (`Tensor [B,T,V]`): the model's aligned logits on the forget inputs (see ``tokens.shift``).
        weights (`Tensor [B,T]`): answer mask or TokenUnlearn weights.
        reduction (`str`, defaults to ``"sequence"``): ``sequence`` = weighted mean per sequence, then
            over sequences (rows without weighted tokens left out); ``token`` = one mean over all answer
            tokens of the batch, as the authors' code (sail-sg/closer-look-LLM-unlearning), which
            weights long answers more. The two agree when every row has as many answer tokens.
    """
    return reduce_tokens(token_uniform_kl(logits), weights, reduction)


def step_me(ctx, batch, cfg):
    f = ctx.policy(batch["forget"])
    return combine(me_loss(f.logits, f.weights, cfg.loss_reduction), ctx, batch, cfg)

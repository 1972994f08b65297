"""DPO used for unlearning (IdkDPO), and the AP retain term of IDK+AP.

DPO: Rafailov et al., "Direct Preference Optimization: Your Language Model is Secretly a Reward
Model", arXiv 2305.18290. As an unlearning baseline (refusal preferred over the forget answer):
Maini et al., TOFU, arXiv 2401.06121, and Zhang et al., NPO, arXiv 2404.05868.
AP: Yuan et al., "A Closer Look at Machine Unlearning for Large Language Models", arXiv 2410.08109.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from unlearnkit.objectives.combine import combine
from unlearnkit.objectives.nll import nll_loss


def _weighted_sum(values: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    return (values * weights).sum(-1)


def dpo_loss(
    chosen_logps: torch.Tensor,
    chosen_ref_logps: torch.Tensor,
    chosen_weights: torch.Tensor,
    rejected_logps: torch.Tensor,
    rejected_ref_logps: torch.Tensor,
    rejected_weights: torch.Tensor,
    beta: float = 0.1,
) -> torch.Tensor:
    """``-(2/beta) * mean_i log sigmoid(beta * (r_i^chosen - r_i^rejected))``, ``r = sum_t w_t (logp - ref_logp)``.

    Intuition: raise the refusal's likelihood relative to the reference model while lowering the
    forget answer's; the push fades once the refusal is clearly preferred.
    In IdkDPO the paper's preferred answer ``y_w`` is the "I don't know" answer (``chosen_*``) and the
    dispreferred ``y_l`` is the forget answer (``rejected_*``), both to the same forget question.
    The ``2/beta`` factor follows the open-unlearning / closer-look implementations; standard DPO has
    no such factor (it is ``-mean log sigmoid(...)``). It only rescales the loss (and so the effective
    learning rate), not its minimiser.

    Args:
        chosen_logps (`Tensor [B,T_c]`): policy log-probs of the refusal answer tokens.
        chosen_ref_logps (`Tensor [B,T_c]`): reference log-probs of the same tokens, no gradient.
        chosen_weights (`Tensor [B,T_c]`): answer mask of the refusal (sequence sums, as in DPO).
        rejected_logps (`Tensor [B,T_r]`): policy log-probs of the forget answer tokens.
        rejected_ref_logps (`Tensor [B,T_r]`): reference log-probs of the same tokens, no gradient.
        rejected_weights (`Tensor [B,T_r]`): answer mask of the forget answer, or TokenUnlearn weights.
        beta (`float`, defaults to 0.1): inverse temperature.
    ``T_c`` and ``T_r`` may differ (the two answers are encoded separately); row ``i`` pairs both.
    Reduction: mean over the ``B`` pairs; a side with no weighted token contributes ``r = 0`` and the
    row is kept (as in :func:`npo_loss`), so a fully masked pair adds ``-(2/beta) log 0.5``.
    """
    chosen = _weighted_sum(chosen_logps - chosen_ref_logps.detach(), chosen_weights)
    rejected = _weighted_sum(rejected_logps - rejected_ref_logps.detach(), rejected_weights)
    return -(2.0 / beta) * F.logsigmoid(beta * (chosen - rejected)).mean()


def ap_loss(
    answer_logps: torch.Tensor,
    answer_weights: torch.Tensor,
    idk_logps: torch.Tensor,
    idk_weights: torch.Tensor,
    beta: float = 0.1,
) -> torch.Tensor:
    """AP (answer preservation): ``-(1/beta) * mean_i log sigmoid(beta * (log pi(y_r|x_r) - log pi(y_idk|x_r)))``.

    Intuition: on retain questions, keep the true answer preferred over a refusal, so IDK training
    on the forget set does not teach the model to refuse everything. Reference-free.
    ``log pi(.|x_r)`` are sequence *sums* of token log-probs (weighted sums here), as in the paper's
    eq. and the authors' code (sail-sg/closer-look-LLM-unlearning ``ap_loss``: difference of summed
    token NLLs).

    Args:
        answer_logps (`Tensor [B,T_a]`): policy log-probs of the retain answer ``y_r`` tokens.
        answer_weights (`Tensor [B,T_a]`): its answer mask.
        idk_logps (`Tensor [B,T_i]`): policy log-probs of a refusal ``y_idk`` to the same retain question.
        idk_weights (`Tensor [B,T_i]`): its answer mask.
        beta (`float`, defaults to 0.1): inverse temperature.
    Reduction: mean over the ``B`` pairs; an empty side contributes a sum of 0 and the row is kept.
    """
    margin = _weighted_sum(answer_logps, answer_weights) - _weighted_sum(idk_logps, idk_weights)
    return -(1.0 / beta) * F.logsigmoid(beta * margin).mean()


def step_idk_dpo(ctx, batch, cfg):
    """Chosen = the refusal to the forget question, rejected = the forget answer."""
    f, i = ctx.policy(batch["forget"]), ctx.policy(batch["idk"])
    loss = dpo_loss(
        i.logps,
        ctx.ref_logps(batch["idk"]),
        i.mask.float(),
        f.logps,
        ctx.ref_logps(batch["forget"]),
        f.weights,
        cfg.beta,
    )
    return combine(loss, ctx, batch, cfg)


def step_idk_ap(ctx, batch, cfg):
    """Refusal NLL on forget + AP on retain: prefer the true retain answer over a refusal to it."""
    i = ctx.policy(batch["idk"])
    idk = nll_loss(i.logps, i.mask.float(), cfg.loss_reduction)
    if not ctx.wants_retain:  # SAM's perturbed pass: the forget part only, no retain forwards
        return combine(idk, ctx, batch, cfg)
    r, ri = ctx.policy(batch["retain"]), ctx.policy(batch["retain_idk"])
    ap = ap_loss(r.logps, r.mask.float(), ri.logps, ri.mask.float(), cfg.beta)
    return combine(idk, ctx, batch, cfg, {"ap": ap.detach()}, retain_extra=ap)

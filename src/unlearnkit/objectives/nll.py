"""The plain negative log-likelihood of answer tokens: the retain term, IDK's refusal loss, and what
gradient ascent ascends (:mod:`unlearnkit.objectives.ga`)."""

from __future__ import annotations

import torch

from unlearnkit.objectives.reduction import reduce_tokens


def nll_loss(logps: torch.Tensor, weights: torch.Tensor, reduction: str = "sequence") -> torch.Tensor:
    """NLL of the answer tokens: ``-log p(y_t)`` reduced as ``reduction`` says.

    Args:
        logps (`Tensor [B,T]`): log-probabilities of the answer tokens (aligned, see ``tokens.shift``).
        weights (`Tensor [B,T]`): token weights, 0 outside the answer. The answer mask gives the
            usual NLL_mean; TokenUnlearn weights give its token-level variant.
        reduction (`str`, defaults to ``"sequence"``): ``sequence`` = per-sequence mean, then the mean
            over sequences (NLL_mean); ``token`` = one mean over every answer token of the
            batch, i.e. Hugging Face's ``outputs.loss`` as TOFU, open-unlearning and the ASU authors use
            it (see ``unlearnkit.objectives.reduction``).
    Rows without any weighted token are left out (``sequence``) or add nothing (``token``).
    """
    return reduce_tokens(-logps, weights, reduction)

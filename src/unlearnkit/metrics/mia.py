"""Membership-inference attack (MIA) scores over per-token log-probabilities (model-free).

Every score is a per-sequence MEMBERSHIP score: HIGHER = more likely the sequence was trained on.
So ``unlearnkit.metrics.scores.auc(scores[forget], scores[holdout])`` is P(forget looks more member
than holdout); MUSE's PrivLeak AUC is the complement orientation, ``auc(scores[holdout],
scores[forget])`` (see ``unlearnkit.metrics.scores.privleak``).
(open-unlearning returns the negated values, i.e. lower = member; the AUCs agree after that flip.)

Direction for unlearning: after unlearning, forget-set scores should DROP towards the holdout
scores; AUC(forget vs holdout) near the retrained model's AUC (usually ~0.5) = more forgotten.

Inputs are teacher-forced quantities computed elsewhere:
* ``token_logps`` [B, T]: log p(y_t | y_<t) of each target token (padding values are ignored);
* ``mask`` [B, T] bool: which positions are target tokens; rows must contain at least one;
* for Min-K%++: ``mu`` / ``sigma`` [B, T], see :func:`logprob_stats`.

References:
* LOSS: Yeom et al. 2018; used as an MIA in MUSE (Shi et al., arXiv 2407.06460).
* zlib: Carlini et al., "Extracting Training Data from Large Language Models", USENIX Security 2021.
* Min-K%: Shi et al., "Detecting Pretraining Data from Large Language Models", arXiv 2310.16789.
* Min-K%++: Zhang et al., "Min-K%++: Improved Baseline for Detecting Pre-Training Data from Large
  Language Models", arXiv 2404.02936.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import torch
import torch.nn.functional as F

__all__ = [
    "logprob_stats",
    "loss_score",
    "min_k_plus_plus_score",
    "min_k_score",
    "zlib_score",
]


def _check_inputs(token_logps: torch.Tensor, mask: torch.Tensor, name: str) -> torch.Tensor:
    """Validate shapes, return the bool mask; raise ValueError naming fully-masked rows."""
    if token_logps.dim() != 2:
        raise ValueError(f"{name}: token_logps must be [B, T], got shape {tuple(token_logps.shape)}")
    if mask.shape != token_logps.shape:
        raise ValueError(
            f"{name}: mask shape {tuple(mask.shape)} does not match token_logps shape {tuple(token_logps.shape)}"
        )
    mask = mask.bool()
    empty = torch.nonzero(mask.sum(dim=1) == 0).flatten().tolist()
    if empty:
        raise ValueError(
            f"{name}: row(s) {empty} have no unmasked target tokens; every row needs at least one"
        )
    return mask


def _check_k(k: float, name: str) -> None:
    if not 0.0 < k <= 1.0:
        raise ValueError(f"{name}: k must be in (0, 1], got {k}")


def _masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    # torch.where (not values * mask) so -inf / NaN at padded positions cannot leak in.
    total = torch.where(mask, values, torch.zeros((), dtype=values.dtype)).sum(dim=1)
    return total / mask.sum(dim=1).to(values.dtype)


def _mean_of_lowest_fraction(values: torch.Tensor, mask: torch.Tensor, k: float) -> torch.Tensor:
    """Per row: mean of the lowest max(1, int(k * n)) unmasked values, n = number of unmasked."""
    n = mask.sum(dim=1)
    num = torch.tensor([max(1, int(k * int(c))) for c in n.tolist()], device=values.device)
    filled = torch.where(mask, values, torch.full((), float("inf"), dtype=values.dtype))
    ordered, _ = torch.sort(filled, dim=1)  # masked (+inf) positions sort last
    keep = torch.arange(values.shape[1], device=values.device).unsqueeze(0) < num.unsqueeze(1)
    total = torch.where(keep, ordered, torch.zeros((), dtype=values.dtype)).sum(dim=1)
    return total / num.to(values.dtype)


def logprob_stats(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and std of log p(v) under the model's own next-token distribution (Min-K%++, arXiv 2404.02936).

    With log p = log_softmax(logits) over the vocabulary (last dim):
    mu = E_{v~p}[log p(v)] = sum_v p(v) log p(v) (= minus the entropy) and
    sigma = sqrt(E_{v~p}[(log p(v) - mu)^2]). Computed in float32 (or float64 if the logits are);
    vocabulary entries with p = 0 (logit -inf) contribute 0. Input [..., V] -> two tensors [...].
    """
    work_dtype = torch.float64 if logits.dtype == torch.float64 else torch.float32
    logp = F.log_softmax(logits.to(work_dtype), dim=-1)
    p = logp.exp()
    live = p > 0
    zero = torch.zeros((), dtype=work_dtype, device=logits.device)
    mu = torch.where(live, p * logp, zero).sum(dim=-1)
    var = torch.where(live, p * (logp - mu.unsqueeze(-1)).square(), zero).sum(dim=-1)
    return mu, var.clamp_min(0.0).sqrt()


def loss_score(token_logps: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """LOSS attack: mean target-token log-prob = -NLL_mean (Yeom et al. 2018; MUSE arXiv 2407.06460).

    Returns [B]; HIGHER = more likely a member. Unlearning direction: forget-set scores LOWER = more
    forgotten. Raises ValueError naming any row with no unmasked tokens.
    """
    mask = _check_inputs(token_logps, mask, "loss_score")
    return _masked_mean(token_logps, mask)


def zlib_score(token_logps: torch.Tensor, mask: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
    """zlib attack: -NLL_mean / zlib_len (Carlini et al. 2021; MUSE arXiv 2407.06460; open-unlearning).

    zlib_len = len(zlib.compress(text.encode("utf-8"))) is the zlib entropy (in bytes) of the scored
    text, which calibrates the loss by how compressible the text is. This is the ratio of log
    perplexity to zlib entropy used by Carlini et al., MUSE and open-unlearning, negated so that
    HIGHER = more likely a member. Unlearning direction: forget-set scores LOWER = more forgotten.
    ``texts`` holds one string per row (the target text whose tokens ``token_logps`` scores).
    Raises ValueError on a length mismatch or a row with no unmasked tokens.
    """
    mask = _check_inputs(token_logps, mask, "zlib_score")
    if len(texts) != token_logps.shape[0]:
        raise ValueError(f"zlib_score: got {len(texts)} texts for {token_logps.shape[0]} rows")
    zlen = torch.tensor(
        [len(zlib.compress(t.encode("utf-8"))) for t in texts],
        dtype=token_logps.dtype,
        device=token_logps.device,
    )
    return _masked_mean(token_logps, mask) / zlen


def min_k_score(token_logps: torch.Tensor, mask: torch.Tensor, k: float = 0.4) -> torch.Tensor:
    """Min-K% Prob: mean of the lowest k fraction of target-token log-probs (Shi et al., arXiv 2310.16789).

    Per row with n target tokens, averages the lowest max(1, int(k * n)) log-probs (int() floors,
    as the reference and open-unlearning implementations do). Returns [B]; HIGHER = more likely a
    member (a member has few very unlikely tokens). Unlearning direction: forget-set scores LOWER =
    more forgotten. ``k`` in (0, 1]; k = 1 reduces to :func:`loss_score`.
    Raises ValueError naming any row with no unmasked tokens.
    """
    _check_k(k, "min_k_score")
    mask = _check_inputs(token_logps, mask, "min_k_score")
    return _mean_of_lowest_fraction(token_logps, mask, k)


def min_k_plus_plus_score(
    token_logps: torch.Tensor,
    mu: torch.Tensor,
    sigma: torch.Tensor,
    mask: torch.Tensor,
    k: float = 0.4,
    eps: float = 1e-6,
) -> torch.Tensor:
    """Min-K%++: mean of the lowest k fraction of z-scored token log-probs (Zhang et al., arXiv 2404.02936).

    z_t = (log p(y_t) - mu_t) / max(sigma_t, eps), with mu_t / sigma_t the mean / std of log p(v)
    under the model's own distribution at position t (:func:`logprob_stats`); ``eps`` guards
    sigma = 0 (a one-hot distribution). Then, per row, the mean of the lowest max(1, int(k * n)) z's.
    Returns [B]; HIGHER = more likely a member (training tokens sit at local maxima of the
    likelihood, so z > 0). Unlearning direction: forget-set scores LOWER = more forgotten.
    Raises ValueError on shape mismatches or a row with no unmasked tokens.
    """
    _check_k(k, "min_k_plus_plus_score")
    mask = _check_inputs(token_logps, mask, "min_k_plus_plus_score")
    if mu.shape != token_logps.shape or sigma.shape != token_logps.shape:
        raise ValueError(
            f"min_k_plus_plus_score: mu {tuple(mu.shape)} and sigma {tuple(sigma.shape)} must match "
            f"token_logps {tuple(token_logps.shape)}"
        )
    dtype = torch.promote_types(token_logps.dtype, torch.float32)
    z = (token_logps.to(dtype) - mu.to(dtype)) / sigma.to(dtype).clamp_min(eps)
    return _mean_of_lowest_fraction(z, mask, k)
